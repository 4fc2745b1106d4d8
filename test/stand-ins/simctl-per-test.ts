// One simctl stand-in and agent data directory for each test of a simctl driver test file: made
// before the test (the host's device types and runtimes as recorded, the person's simulators in the
// default set as given), both removed after.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCommandRunner, SimctlDriver } from '../../agent/index.js';
import { perTest } from '../per-test.js';
import { SimctlStandIn } from './simctl-stand-in.js';
import { readTestdata } from './stand-in.js';

/** The running test's stand-in and the agent's folders. */
export interface SimctlPerTest {
  readonly standIn: SimctlStandIn;
  /** The host's `simctl list -j devicetypes runtimes`, as recorded (simctl's testdata). */
  readonly host: string;
  /** The agent's data directory: a fresh temporary folder. */
  readonly dataDir: string;
  /** The agent's own device set in it. */
  readonly setDir: string;
  /** The agent's simctl driver over the stand-in, `options` as SimctlDriver takes them. */
  driver: (options?: Partial<SimctlDriverOptions>) => SimctlDriver;
}

/** The simctl driver's folder: its testdata/ holds the recorded host. */
const SIMCTL_FOLDER = new URL('../../agent/drivers/simctl/', import.meta.url).href;

type SimctlDriverOptions = ConstructorParameters<typeof SimctlDriver>[0];
type DefaultSet = Parameters<typeof SimctlStandIn.create>[0]['defaultSet'];

/** Call in a test file or describe: what it answers is, in each test, that test's own. */
export function simctlPerTest(defaultSet?: DefaultSet): SimctlPerTest {
  return perTest<SimctlPerTest>(
    'simctl stand-in',
    async () => {
      const host = await readTestdata(SIMCTL_FOLDER, 'list-devicetypes-runtimes.json');
      const standIn = await SimctlStandIn.create({ host, ...(defaultSet ? { defaultSet } : {}) });
      const dataDir = await mkdtemp(join(tmpdir(), 'simlock-agent-data-'));
      const driver = (options: Partial<SimctlDriverOptions> = {}) =>
        new SimctlDriver({ dataDir, run: createCommandRunner({ env: standIn.env }), ...options });
      return { standIn, host, dataDir, setDir: join(dataDir, 'simctl-set'), driver };
    },
    async ({ standIn, dataDir }) => {
      await standIn.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    },
  );
}
