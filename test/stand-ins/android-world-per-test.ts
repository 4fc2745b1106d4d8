// One Android world (android-world.ts) for each test of a driver test file: made before the test,
// its stand-ins cleaned up after, and the calls the agent made in it.
import { afterEach, beforeEach } from 'vitest';
import type { CallRecord } from './android-stand-ins.js';
import { androidWorld, type AndroidWorld } from './android-world.js';

/** The running test's world, as the file's tests use it. */
export interface AndroidWorldPerTest extends AndroidWorld {
  /** The calls the agent made: those after the world's own setup (the person's). */
  agentCalls: () => Promise<CallRecord[]>;
}

/** Call at the top of a test file: what it answers is, in each test, that test's own world. */
export function androidWorldPerTest(): AndroidWorldPerTest {
  let current: AndroidWorld | undefined;
  beforeEach(async () => {
    current = await androidWorld();
  });
  afterEach(async () => {
    await current?.standIns.cleanup();
    current = undefined;
  });
  const world = (): AndroidWorld => {
    if (current === undefined) throw new Error('no Android world outside a test');
    return current;
  };
  return {
    get standIns() {
      return world().standIns;
    },
    get dataDir() {
      return world().dataDir;
    },
    get setupCalls() {
      return world().setupCalls;
    },
    agentCalls: async () => (await world().standIns.calls()).slice(world().setupCalls),
  };
}
