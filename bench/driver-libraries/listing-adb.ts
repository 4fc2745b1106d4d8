// adb: our AdbDriver (its whole listing, and its `adb devices -l` alone) against appium-adb's
// getConnectedDevices over the same stand-in adb, and adbkit's listDevices/listDevicesWithPaths
// against a fake adb server answering from the same recorded `adb devices -l`.
//
// Our driver works in a place of its own: its AVDs in <dataDir>/avd (here the two AVDs of
// adb/testdata/avd, one of them running), its emulators on an adb server of its own
// (`adb -P 5137`, here serving that AVD as emulator-5600, the recording's emulator row on one of
// the agent's console ports), the phones on the default server (`adb devices -l`: the recording,
// whose emulator-5554 is a person's and is left out), and what it can make from `avdmanager list
// device` and the SDK's system images (adb/testdata/sdk). So one listing of ours asks two servers.
// appium-adb lists one server: the default one (its adbPort 5037), as our `adb devices -l` does.
//
// appium-adb finds adb under its SDK root (platform-tools/adb), so the SDK root here is a folder
// whose platform-tools is the stand-ins' folder. The phone's `getprop` lines for adbkit are written
// from the same values the adb driver's tests give the stand-in (no recording of a whole getprop).
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AdbDriver, createCommandRunner, parseAdbDevices } from '../../agent/index.js';
import { StandIns, type StandInRule } from '../../test/index.js';
import { FakeAdbServer } from './fake-adb-server.js';
import { importLibrary, LIBRARIES, quietAppiumLog, type Library } from './libraries.js';
import {
  compareIds,
  counter,
  measureListing,
  withPath,
  type Counter,
  type ListingFigures,
  type ParseComparison,
} from './listing.js';

const PHONE = '0A281FDD4003QK';
/** The agent's own adb server port (agent config adb.serverPort's default). */
const SERVER_PORT = '5137';
/** The default adb server's port: the phones', and appium-adb's default adbPort. */
const DEFAULT_PORT = '5037';
/** The AVD of the agent's home that runs, and its serial on the agent's server. */
const RUNNING_AVD = 'Pixel_7_API_34';
const AGENT_EMULATOR = 'emulator-5600';

const PHONE_PROPS: Record<string, string> = {
  'ro.build.version.sdk': '34',
  'ro.product.model': 'Pixel 7',
  'ro.build.characteristics': 'nosdcard',
};

const AppiumDevice = z.object({ udid: z.string(), state: z.string(), model: z.string() });
interface AppiumAdb {
  getConnectedDevices(options: { verbose: true }): Promise<unknown>;
}
const AppiumModule = z.object({
  ADB: z.custom<{ createADB(options: object): Promise<AppiumAdb> }>(),
});

const AdbkitDevice = z.object({ id: z.string(), type: z.string() });
const AdbkitLongDevice = AdbkitDevice.extend({ model: z.string().optional() });
interface AdbkitClient {
  version(): Promise<number>;
  listDevices(): Promise<unknown>;
  listDevicesWithPaths(): Promise<unknown>;
  getDevice(serial: string): { getProperties(): Promise<Record<string, string>> };
}
interface Adbkit {
  createClient(options: { host: string; port: number; bin: string }): AdbkitClient;
}
const AdbkitModule = z.object({ Adb: z.custom<Adbkit>() });

export interface AdbResults {
  listings: ListingFigures[];
  parsing: ParseComparison[];
}

function library(key: Library['key']): Library {
  return LIBRARIES.find((candidate) => candidate.key === key)!;
}

export async function measureAdb(root: string, libs: string, runs: number): Promise<AdbResults> {
  const testdata = join(root, 'agent/drivers/adb/testdata');
  const devicesL = await readFile(join(testdata, 'devices-l.txt'), 'utf8');
  const getprop = (name: string): StandInRule => ({
    argv: ['-s', PHONE, 'shell', 'getprop', name],
    stdout: `${PHONE_PROPS[name]}\n`,
  });
  const recordedEmulator = devicesL.split('\n').find((line) => line.startsWith('emulator-5554'));
  if (recordedEmulator === undefined) throw new Error('devices-l.txt has no emulator-5554 row');
  const agentDevicesL = `List of devices attached\n${recordedEmulator.replace('emulator-5554', AGENT_EMULATOR)}\n\n`;
  const onAgent = (...argv: string[]) => ['-P', SERVER_PORT, ...argv];
  const adbRules: StandInRule[] = [
    // Ours: its own server (started once), the emulators on it, then phones on the default one.
    { argv: onAgent('start-server') },
    { argv: onAgent('devices', '-l'), stdout: agentDevicesL },
    {
      argv: onAgent('-s', AGENT_EMULATOR, 'emu', 'avd', 'name'),
      stdout: `${RUNNING_AVD}\r\nOK\r\n`,
    },
    {
      argv: onAgent('-s', AGENT_EMULATOR, 'shell', 'getprop', 'sys.boot_completed'),
      stdout: '1\n',
    },
    { argv: ['devices', '-l'], stdout: devicesL },
    ...Object.keys(PHONE_PROPS).map(getprop),
    // appium-adb: every call carries -P <port>; createADB starts the server first.
    { argv: ['-P', DEFAULT_PORT, 'start-server'] },
    { argv: ['-P', DEFAULT_PORT, 'devices', '-l'], stdout: devicesL },
  ];
  const standIns = await StandIns.create({
    adb: adbRules,
    emulator: [{ argv: ['-list-avds'], stdout: 'Pixel_7_API_34\nPixel_Tablet_API_35\n' }],
    avdmanager: [
      {
        argv: ['list', 'device'],
        stdout: await readFile(join(testdata, 'avdmanager-list-device.txt'), 'utf8'),
      },
    ],
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'simlock-driver-libraries-adb-'));
  await cp(join(testdata, 'avd'), join(dataDir, 'avd'), { recursive: true });
  const sdkRoot = await mkdtemp(join(tmpdir(), 'simlock-driver-libraries-sdk-'));
  await symlink(standIns.dir, join(sdkRoot, 'platform-tools'));
  const server = await FakeAdbServer.start({
    devicesL,
    getprop: {
      [PHONE]: Object.entries(PHONE_PROPS)
        .map(([key, value]) => `[${key}]: [${value}]\n`)
        .join(''),
    },
  });
  try {
    const count = counter(standIns, ['adb', 'emulator', 'avdmanager'], {
      count: () => server.connections,
      reset: () => server.resetCounts(),
    });
    const env = { ...standIns.env, ANDROID_HOME: join(testdata, 'sdk') };
    const run = createCommandRunner({ env });
    const ours = new AdbDriver({
      dataDir,
      env,
      run,
      arch: 'x64',
      adb: { serverPort: Number(SERVER_PORT), adopt: [] },
      spawnDetached: () => Promise.reject(new Error('no boots in a listing')),
    });
    const oursRaw = async () => parseAdbDevices((await run(['adb', 'devices', '-l'])).stdout);
    const { ADB } = AppiumModule.parse(await importLibrary(libs, library('appium-adb')));
    quietAppiumLog();
    const appium = await withPath(standIns.dir, () =>
      ADB.createADB({ sdkRoot, adbPort: Number(DEFAULT_PORT) }),
    );
    const appiumList = async () =>
      z.array(AppiumDevice).parse(await appium.getConnectedDevices({ verbose: true }));
    const { Adb } = AdbkitModule.parse(await importLibrary(libs, library('adbkit')));
    const adbkit = Adb.createClient({
      host: '127.0.0.1',
      port: server.port,
      bin: join(standIns.dir, 'adb'),
    });
    const adbkitLong = async () =>
      z.array(AdbkitLongDevice).parse(await adbkit.listDevicesWithPaths());

    const listings = [
      await measureListing(
        'ours: AdbDriver.listDevices',
        'the AVDs of its own home (model, API level, class, power: its emulators on its own server), ' +
          'trusted phones on the default server (model, API level, class), what it can make',
        count,
        () => ours.listDevices(),
        runs,
      ),
      await measureListing(
        'ours: `adb devices -l` parsed',
        'serial, state, key:value properties',
        count,
        oursRaw,
        runs,
      ),
      await measureListing(
        'appium-adb: getConnectedDevices({verbose})',
        'udid, state, product, model, device, usb, transport_id; offline rows dropped',
        count,
        appiumList,
        runs,
      ),
      await measureListing(
        'adbkit: listDevicesWithPaths',
        'id, type, then the rest of the row by position',
        count,
        adbkitLong,
        runs,
      ),
      await measureListing(
        'adbkit: listDevices',
        'id, type',
        count,
        () => adbkit.listDevices(),
        runs,
      ),
      await measureListing(
        `ours: a phone's 3 properties`,
        'ro.build.version.sdk, ro.product.model, ro.build.characteristics',
        count,
        async () => {
          for (const name of Object.keys(PHONE_PROPS)) {
            await run(['adb', '-s', PHONE, 'shell', 'getprop', name]);
          }
        },
        runs,
      ),
      await measureListing(
        "adbkit: a phone's getProperties",
        'every property, one shell:getprop',
        count,
        () => adbkit.getDevice(PHONE).getProperties(),
        runs,
      ),
    ];
    listings.push(
      await adbkitWithoutServer(Adb, standIns.dir, count, runs, (port) =>
        // adbkit starts the server itself when its connection is refused.
        standIns.setRules('adb', [...adbRules, { argv: ['-P', String(port), 'start-server'] }]),
      ),
    );

    // The figures are of a listing that found what the host has, not of one that failed early.
    const listed = await ours.listDevices();
    const found = listed.devices.map((device) => `${device.id} ${device.power}`).sort();
    const expected = [`${PHONE} booted`, `${RUNNING_AVD} booted`, 'Pixel_Tablet_API_35 shutdown'];
    if (found.join() !== expected.join() || (listed.makeable ?? []).length === 0) {
      throw new Error(
        `our adb listing found ${found.join(', ') || 'nothing'} and ${(listed.makeable ?? []).length} makeable models; expected ${expected.join(', ')} and some`,
      );
    }

    const ourEntries = await oursRaw();
    const appiumEntries = await appiumList();
    const adbkitEntries = await adbkitLong();
    const adbkitPlain = z.array(AdbkitDevice).parse(await adbkit.listDevices());
    const key = (serial: string, state: string) => `${serial} ${state}`;
    const ourKeys = ourEntries.map((entry) => key(entry.serial, entry.state));
    const models = (name: string, pairs: [string, string | undefined][]) =>
      `${name} model: ${pairs.map(([serial, model]) => `${serial}=${model ?? '(none)'}`).join(', ')}`;
    const ourModels = models(
      'ours',
      ourEntries.map((entry) => [entry.serial, entry.properties.model]),
    );
    return {
      listings,
      parsing: [
        compareIds(
          'adb devices -l: appium-adb',
          ourKeys,
          appiumEntries.map((entry) => key(entry.udid, entry.state)),
          [
            ourModels,
            models(
              'appium-adb',
              appiumEntries.map((e) => [e.udid, e.model]),
            ),
          ],
        ),
        compareIds(
          'host:devices-l: adbkit listDevicesWithPaths',
          ourKeys,
          adbkitEntries.map((entry) => key(entry.id, entry.type)),
          [
            ourModels,
            models(
              'adbkit',
              adbkitEntries.map((e) => [e.id, e.model]),
            ),
          ],
        ),
        compareIds(
          'host:devices: adbkit listDevices',
          ourKeys,
          adbkitPlain.map((entry) => key(entry.id, entry.type)),
          [],
        ),
      ],
    };
  } finally {
    await server.stop();
    await rm(sdkRoot, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
    await standIns.cleanup();
  }
}

/**
 * adbkit with no server on its port: each call opens a connection, is refused, runs
 * `adb -P <port> start-server` once, and tries again. The stand-in adb starts nothing, so the
 * call fails; what is counted is the processes a call starts while the server is down.
 */
async function adbkitWithoutServer(
  Adb: Adbkit,
  standInsDir: string,
  count: Counter,
  runs: number,
  allowStartServer: (port: number) => Promise<void>,
): Promise<ListingFigures> {
  const closed = await FakeAdbServer.start({ devicesL: '', getprop: {} });
  const port = closed.port;
  await closed.stop();
  await allowStartServer(port);
  const client = Adb.createClient({ host: '127.0.0.1', port, bin: join(standInsDir, 'adb') });
  const figures = await measureListing(
    'adbkit: listDevices, no server on the port',
    'fails (ECONNREFUSED) after starting the server once',
    count,
    () =>
      client.listDevices().then(
        () => undefined,
        () => undefined,
      ),
    runs,
  );
  return { ...figures, calls: figures.calls.map((call) => call.replace(String(port), '<port>')) };
}
