// One Android world (android-world.ts) for each test of a driver test file: made before the test,
// its stand-ins cleaned up after, and the calls the agent made in it.
import { perTest } from '../per-test.js';
import type { CallRecord } from './android-stand-ins.js';
import { androidWorld, type AndroidWorld } from './android-world.js';

/** The running test's world, as the file's tests use it. */
export interface AndroidWorldPerTest extends AndroidWorld {
  /** The calls the agent made: those after the world's own setup (the person's). */
  agentCalls: () => Promise<CallRecord[]>;
}

/** Call at the top of a test file: what it answers is, in each test, that test's own world. */
export function androidWorldPerTest(): AndroidWorldPerTest {
  return perTest<AndroidWorldPerTest>(
    'Android world',
    async () => {
      const world = await androidWorld();
      const agentCalls = async () => (await world.standIns.calls()).slice(world.setupCalls);
      return { ...world, agentCalls };
    },
    (world) => world.standIns.cleanup(),
  );
}
