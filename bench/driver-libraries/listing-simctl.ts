// simctl: our SimctlDriver.listDevices against node-simctl's getDevices, both over a stand-in
// xcrun and both in the same device set (the agent's own, `<dataDir>/simctl-set`, which the driver
// names with `--set` before every subcommand). The stand-in answers our
// `simctl --set <dir> list -j devices runtimes devicetypes` with the recorded
// `simctl list -j devices runtimes devicetypes` (the recording's simulators stand for the ones in
// the agent's set; its runtimes and device types are the host's, whichever set is asked).
// node-simctl asks `simctl --set <dir> list devices -j`, whose output is that listing's `devices`
// part alone (simctl prints the sections it is asked for); the stand-in serves it cut from the
// same record.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createCommandRunner, SimctlDriver } from '../../agent/index.js';
import { StandIns } from '../../test/index.js';
import { importLibrary, LIBRARIES } from './libraries.js';
import {
  compareIds,
  counter,
  measureListing,
  withPath,
  type ListingFigures,
  type ParseComparison,
} from './listing.js';

const SimDevice = z.object({
  udid: z.string(),
  name: z.string(),
  state: z.string(),
  sdk: z.string(),
  deviceTypeIdentifier: z.string().optional(),
});
const SimctlDevices = z.record(z.string(), z.array(SimDevice));

interface Simctl {
  getDevices(forSdk?: null, platform?: string | null): Promise<unknown>;
}
const SimctlModule = z.object({ Simctl: z.custom<new (options: object) => Simctl>() });

export interface SimctlResults {
  listings: ListingFigures[];
  parsing: ParseComparison;
}

export async function measureSimctl(
  root: string,
  libs: string,
  runs: number,
): Promise<SimctlResults> {
  const recorded = await readFile(
    join(root, 'agent/drivers/simctl/testdata/list-devices-runtimes-devicetypes.json'),
    'utf8',
  );
  const devicesOnly = `${JSON.stringify({ devices: (JSON.parse(recorded) as { devices: unknown }).devices }, null, 2)}\n`;
  const standIns = await StandIns.create({});
  const dataDir = await mkdtemp(join(tmpdir(), 'simlock-driver-libraries-simctl-'));
  const ours = new SimctlDriver({ dataDir, run: createCommandRunner({ env: standIns.env }) });
  const deviceSet = ours.deviceSetPath!;
  await standIns.setRules('xcrun', [
    {
      argv: ['simctl', '--set', deviceSet, 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
      stdout: recorded,
    },
    { argv: ['simctl', '--set', deviceSet, 'list', 'devices', '-j'], stdout: devicesOnly },
  ]);
  try {
    const count = counter(standIns, ['xcrun']);
    const library = LIBRARIES.find((candidate) => candidate.key === 'node-simctl')!;
    const { Simctl } = SimctlModule.parse(await importLibrary(libs, library));
    const theirs = new Simctl({ devicesSetPath: deviceSet });
    const listTheirs = () => withPath(standIns.dir, () => theirs.getDevices(null, 'iOS'));

    const listings: ListingFigures[] = [
      await measureListing(
        'ours: SimctlDriver.listDevices',
        'iOS simulators of its own set with model, OS, class, power; the catalog of runtimes and models, and what it can make',
        count,
        () => ours.listDevices(),
        runs,
      ),
      await measureListing(
        "node-simctl: getDevices(null, 'iOS')",
        'simulators by OS version: name, udid, state, the raw deviceTypeIdentifier',
        count,
        listTheirs,
        runs,
      ),
    ].map((listing) => ({
      ...listing,
      calls: listing.calls.map((call) => call.replace(deviceSet, '<dir>')),
    }));

    const ourDevices = (await ours.listDevices()).devices;
    const theirDevices = Object.values(SimctlDevices.parse(await listTheirs())).flat();
    const describe = (id: string) => {
      const our = ourDevices.find((device) => device.id === id);
      const their = theirDevices.find((device) => device.udid === id);
      return `${id.slice(0, 8)}: ours ${our ? `${our.model} ${our.os} ${our.power}` : 'absent'}; node-simctl ${their ? `"${their.name}" ${their.sdk} ${their.state} ${their.deviceTypeIdentifier?.split('.').pop() ?? 'no type'}` : 'absent'}`;
    };
    const ids = [...new Set([...ourDevices.map((d) => d.id), ...theirDevices.map((d) => d.udid)])];
    return {
      listings,
      parsing: compareIds(
        'simctl',
        ourDevices.map((device) => device.id),
        theirDevices.map((device) => device.udid),
        ids.map(describe),
      ),
    };
  } finally {
    await standIns.cleanup();
    await rm(dataDir, { recursive: true, force: true });
  }
}
