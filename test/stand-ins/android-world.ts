// Test helper: a host with Android as the adb driver's tests need it, on the stateful stand-ins.
// A person on it has an AVD in the default AVD home, booted on console port 5554 and served by the
// default adb server (5037) they started; a phone is attached by USB, another is unauthorized.
// The SDK has the system images of adb/testdata/sdk and the profiles of avdmanager-list-device.txt.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AdbDriver,
  createCommandRunner,
  createDetachedSpawner,
  parseDeviceProfiles,
  readSystemImages,
  type AdbDriverOptions,
} from '../../agent/index.js';
import { AndroidStandIns } from './android-stand-ins.js';
import type { StandInLaunch } from './stand-in-server.js';

export const PHONE = '0A281FDD4003QK';
export const UNAUTHORIZED_PHONE = 'R58N12ABCDE';
/** The person's AVD, in the default AVD home, running as emulator-5554 on port 5037. */
export const PERSON_AVD = 'Pixel_7_API_34';
export const AGENT_SERVER_PORT = 5137;
export const IMAGE_34 = 'system-images;android-34;google_apis;x86_64';
export const IMAGE_35 = 'system-images;android-35;google_apis;x86_64';

const adbTestdata = (name: string) =>
  fileURLToPath(new URL(`../../agent/drivers/adb/testdata/${name}`, import.meta.url));

export interface AndroidWorld {
  standIns: AndroidStandIns;
  dataDir: string;
  /** How many calls the setup (the person) made: the agent's come after. */
  setupCalls: number;
}

export async function androidWorld(
  options: { launch?: StandInLaunch } = {},
): Promise<AndroidWorld> {
  const profiles = parseDeviceProfiles(
    await readFile(adbTestdata('avdmanager-list-device.txt'), 'utf8'),
  );
  const sdk = adbTestdata('sdk');
  const images = [];
  for (const image of await readSystemImages(sdk)) {
    const dir = join(sdk, 'system-images', image.platform, image.tag, image.abi);
    images.push({
      packagePath: image.packagePath,
      sourceProperties: await readFile(join(dir, 'source.properties'), 'utf8'),
    });
  }
  const standIns = await AndroidStandIns.create({
    ...options,
    profiles,
    images,
    phones: [
      {
        serial: PHONE,
        state: 'device',
        model: 'Pixel 7',
        sdk: '34',
        packages: ['com.example.keeper'],
      },
      {
        serial: UNAUTHORIZED_PHONE,
        state: 'unauthorized',
        model: 'SM-G991B',
        sdk: '33',
        packages: [],
      },
    ],
  });
  standIns.addAvd(standIns.defaultAvdHome, PERSON_AVD, IMAGE_34, 'pixel_7');
  // The person starts their server and boots their AVD, in their own environment.
  const person = standIns.inProcess();
  await person.run(['adb', 'start-server']);
  await person.spawnDetached(['emulator', '-avd', PERSON_AVD, '-port', '5554']);
  return {
    standIns,
    dataDir: join(standIns.dir, '..', 'agent-data'),
    setupCalls: (await standIns.calls()).length,
  };
}

/**
 * The agent's adb driver on the stand-ins: real processes (the executables on PATH), or
 * `inProcess` for tests that make thousands of calls.
 */
export function agentDriver(
  world: AndroidWorld,
  options: Partial<AdbDriverOptions> & { inProcess?: boolean } = {},
): AdbDriver {
  const { inProcess, ...rest } = options;
  const env = world.standIns.env;
  const tools = inProcess
    ? world.standIns.inProcess(env)
    : { run: createCommandRunner({ env }), spawnDetached: createDetachedSpawner(env) };
  return new AdbDriver({
    dataDir: world.dataDir,
    env,
    ...tools,
    adb: { serverPort: AGENT_SERVER_PORT, adopt: [] },
    provision: { enabled: true, models: [], os: [] },
    arch: 'x64',
    isPortFree: () => Promise.resolve(true),
    pollIntervalMs: 10,
    bootTimeoutMs: 20_000,
    shutdownTimeoutMs: 20_000,
    ...rest,
  });
}
