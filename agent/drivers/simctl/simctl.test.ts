import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { aSimulator } from '../../../test/fixtures/driver-devices.js';
import { createCommandRunner } from '../command.js';
import { simctlPerTest } from '../../../test/stand-ins/simctl-per-test.js';
import { readTestdata } from '../../../test/stand-ins/stand-in.js';
import { parseSimctlList, recordedName, SimctlDriver } from './simctl.js';

const IPHONE_16_BOOTED = '0F6C7B1E-3C2A-4D8E-9B1F-6A5E4D3C2B10';
const IPHONE_16_SHUTDOWN = '7D3E2F10-1A2B-4C3D-8E9F-0A1B2C3D4E5F';
const IPHONE_16 = 'com.apple.CoreSimulator.SimDeviceType.iPhone-16';
const IOS_18_4 = 'com.apple.CoreSimulator.SimRuntime.iOS-18-4';

const simulator = aSimulator(IPHONE_16_SHUTDOWN, { name: 'iPhone 16 (2)' });

describe('parsing a recorded simctl listing', () => {
  it('lists the available iOS simulators with model, runtime, class and power', async () => {
    const listing = parseSimctlList(
      await readTestdata(import.meta.url, 'list-devices-runtimes-devicetypes.json'),
    );
    const byId = new Map(listing.devices.map((device) => [device.id, device]));
    expect(byId.get(IPHONE_16_BOOTED)).toEqual({
      id: IPHONE_16_BOOTED,
      name: 'iPhone 16',
      model: 'iPhone 16',
      platform: 'ios',
      os: '18.4',
      physical: false,
      class: 'phone',
      power: 'booted',
    });
    expect(byId.get(IPHONE_16_SHUTDOWN)?.power).toBe('shutdown');
    expect(byId.get('A8B7C6D5-E4F3-4A2B-9C1D-0E9F8A7B6C5D')?.power).toBe('transitioning');
    expect(byId.get('C1D2E3F4-A5B6-4C7D-8E9F-101112131415')).toMatchObject({
      model: 'iPad Pro 13-inch (M4)',
      class: 'tablet',
    });
    expect(byId.get('5A1C0DE2-8B63-4E0A-9E0C-2F2D7C4B6A11')?.os).toBe('17.5');
  });

  it('leaves out watch simulators and simulators of an unavailable runtime', async () => {
    const listing = parseSimctlList(
      await readTestdata(import.meta.url, 'list-devices-runtimes-devicetypes.json'),
    );
    const ids = listing.devices.map((device) => device.id);
    expect(ids).not.toContain('B0B1B2B3-C4C5-4D6D-8E7E-F8F9FAFBFCFD');
    expect(ids).not.toContain('DEADBEEF-0000-4000-8000-000000000016');
    expect(listing.devices).toHaveLength(5);
  });

  it('offers the installed iOS runtimes and the models of its simulators', async () => {
    const { catalog } = parseSimctlList(
      await readTestdata(import.meta.url, 'list-devices-runtimes-devicetypes.json'),
    );
    expect(catalog.platforms).toEqual(['ios']);
    expect(catalog.runtimes).toEqual([
      { platform: 'ios', version: '17.5' },
      { platform: 'ios', version: '18.4' },
    ]);
    expect(catalog.models.map((model) => model.name)).toEqual([
      'iPad Pro 13-inch (M4)',
      'iPhone 15',
      'iPhone 16',
      'iPhone 16 Pro',
    ]);
  });

  it('refuses output that is not the listing it expects', () => {
    expect(() => parseSimctlList('{"devices": {"x": [{"udid": 5}]}}')).toThrow();
    expect(() => parseSimctlList('not json')).toThrow();
  });
});

// Stand-ins are real processes: on a loaded 2-core machine a test's spawns can pass 5 s.
describe(
  'the simctl driver in its own device set, against a stand-in simctl',
  { timeout: 60_000 },
  () => {
    const world = simctlPerTest();
    let driver: SimctlDriver;

    beforeEach(() => {
      driver = world.driver();
    });

    async function make(model = 'iPhone 16', os = '18.4', name = 'simlock iPhone 16 a1b2c3') {
      return driver.create({ platform: 'ios', model, os }, name);
    }

    it('makes its set folder and lists it with one simctl call naming the set', async () => {
      const listing = await driver.listDevices();
      expect((await stat(world.setDir)).isDirectory()).toBe(true);
      expect(await world.standIn.calls()).toEqual([
        ['simctl', '--set', world.setDir, 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
      ]);
      expect(listing.devices).toEqual([]);
      expect(listing.makeable?.find((model) => model.model === 'iPhone 15')?.os).toEqual([
        '17.5',
        '18.4',
      ]);
      expect(listing.catalog.models.map((model) => model.name)).toContain('iPhone 16 Pro');
      expect(listing.catalog.runtimes.map((runtime) => runtime.version)).toEqual(['17.5', '18.4']);
    });

    it('creates a simulator in its set and lists it, shut down', async () => {
      await driver.listDevices();
      const made = await make();
      expect(made).toEqual({
        id: made.id,
        name: 'simlock iPhone 16 a1b2c3',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        physical: false,
        class: 'phone',
        power: 'shutdown',
        deletable: true,
      });
      expect((await world.standIn.calls())[1]).toEqual([
        'simctl',
        '--set',
        world.setDir,
        'create',
        'simlock iPhone 16 a1b2c3',
        IPHONE_16,
        IOS_18_4,
      ]);
      expect(await world.standIn.devices(world.setDir)).toMatchObject([
        { udid: made.id, deviceTypeIdentifier: IPHONE_16, runtime: IOS_18_4, state: 'Shutdown' },
      ]);
      expect(await world.standIn.devices()).toEqual([]);
      expect((await driver.listDevices()).devices).toEqual([made]);
    });

    it('lists before creating when it has not listed yet, and takes the model in any case', async () => {
      const made = await make('IPHONE 15', '17.5', 'fresh');
      expect(made).toMatchObject({ model: 'iPhone 15', os: '17.5', name: 'fresh' });
      expect((await world.standIn.calls()).map((argv) => argv[3])).toEqual(['list', 'create']);
    });

    it('refuses to make what the host does not offer, naming what it does, without running create', async () => {
      await expect(make('iPhone 16', '17.5')).rejects.toThrow(
        /simctl cannot make iPhone 16 with iOS 17\.5 on this host: it offers .*iPhone 16 \(iOS 18\.4\)/,
      );
      const off = world.driver({ provision: { enabled: false, models: [], os: [] } });
      await expect(
        off.create({ platform: 'ios', model: 'iPhone 16', os: '18.4' }, 'x'),
      ).rejects.toThrow(/provisioning is off/);
      expect((await world.standIn.calls()).some((argv) => argv.includes('create'))).toBe(false);
    });

    it("reports simctl's own refusals: a device type or runtime gone since the listing", async () => {
      await driver.listDevices();
      const withoutIos18 = JSON.parse(world.host) as { runtimes: Array<{ identifier: string }> };
      withoutIos18.runtimes = withoutIos18.runtimes.filter(
        (runtime) => runtime.identifier !== IOS_18_4,
      );
      await world.standIn.setHost(JSON.stringify(withoutIos18));
      await expect(make()).rejects.toThrow(
        /^xcrun simctl create could not make iPhone 16 \(com\.apple\.CoreSimulator\.SimDeviceType\.iPhone-16\) with iOS 18\.4 \(com\.apple\.CoreSimulator\.SimRuntime\.iOS-18-4\): exited 161: Invalid runtime: com\.apple\.CoreSimulator\.SimRuntime\.iOS-18-4$/,
      );
      const withoutIphone16 = JSON.parse(world.host) as {
        devicetypes: Array<{ identifier: string }>;
      };
      withoutIphone16.devicetypes = withoutIphone16.devicetypes.filter(
        (type) => type.identifier !== IPHONE_16,
      );
      await world.standIn.setHost(JSON.stringify(withoutIphone16));
      await expect(make()).rejects.toThrow(
        /exited 161: Invalid device type: com\.apple\.CoreSimulator\.SimDeviceType\.iPhone-16$/,
      );
      expect(await world.standIn.devices(world.setDir)).toEqual([]);
    });

    it('reports a device type the runtime cannot run, and a full disk, with what simctl said', async () => {
      await driver.listDevices();
      const narrowed = JSON.parse(world.host) as {
        runtimes: Array<{
          identifier: string;
          supportedDeviceTypes: Array<{ identifier: string }>;
        }>;
      };
      const ios18 = narrowed.runtimes.find((runtime) => runtime.identifier === IOS_18_4)!;
      ios18.supportedDeviceTypes = ios18.supportedDeviceTypes.filter(
        (type) => type.identifier !== IPHONE_16,
      );
      await world.standIn.setHost(JSON.stringify(narrowed));
      await expect(make()).rejects.toThrow(
        /exited 147: Unable to create a device for device type: iPhone 16 \(com\.apple\.CoreSimulator\.SimDeviceType\.iPhone-16\), runtime: iOS 18\.4 \(18\.4 - 22E238\)/,
      );
      await world.standIn.setHost(world.host);
      await world.standIn.failNextCreate('disk-full');
      await expect(make()).rejects.toThrow(
        /xcrun simctl create could not make iPhone 16 .*exited 28: .*domain=NSPOSIXErrorDomain, code=28\):\nNo space left on device/s,
      );
      expect(await world.standIn.devices(world.setDir)).toEqual([]);
      expect(await make()).toMatchObject({ model: 'iPhone 16' });
    });

    it('boots with bootstatus -b in its set, and takes an already-booted one as booted', async () => {
      const made = await make();
      await world.standIn.clearCalls();
      await driver.boot(made);
      await driver.boot(made);
      expect(await world.standIn.calls()).toEqual([
        ['simctl', '--set', world.setDir, 'bootstatus', made.id, '-b'],
        ['simctl', '--set', world.setDir, 'bootstatus', made.id, '-b'],
      ]);
      expect(await world.standIn.devices(world.setDir)).toMatchObject([
        { state: 'Booted', boots: 1 },
      ]);
    });

    it('shuts down (already down counts as done) and erases only a shut-down simulator', async () => {
      const made = await make();
      await driver.shutdown(made);
      await driver.boot(made);
      await world.standIn.clearCalls();
      await driver.erase(made);
      expect(await world.standIn.calls()).toEqual([
        ['simctl', '--set', world.setDir, 'shutdown', made.id],
        ['simctl', '--set', world.setDir, 'erase', made.id],
      ]);
      expect(await world.standIn.devices(world.setDir)).toMatchObject([
        { state: 'Shutdown', erased: 1 },
      ]);
    });

    it('deletes a simulator of its set; one already gone counts as deleted', async () => {
      const made = await make();
      await driver.delete(made);
      expect(await world.standIn.devices(world.setDir)).toEqual([]);
      await expect(driver.delete(made)).resolves.toBeUndefined();
      expect((await world.standIn.calls()).slice(-2)).toEqual([
        ['simctl', '--set', world.setDir, 'delete', made.id],
        ['simctl', '--set', world.setDir, 'delete', made.id],
      ]);
    });

    it("reports a failed command with the tool's stderr, and reaches no device outside its set", async () => {
      await expect(driver.boot(simulator)).rejects.toThrow(
        new RegExp(
          `--set ${world.setDir} bootstatus ${IPHONE_16_SHUTDOWN} -b exited 148: Invalid device: ${IPHONE_16_SHUTDOWN}`,
        ),
      );
      await expect(driver.boot({ ...simulator, id: 'all' })).rejects.toThrow(
        /not an iOS simulator's UDID/,
      );
    });

    it("runs a holder's command on the leased simulator in its set, and only there", async () => {
      const made = await make();
      await driver.boot(made);
      const run = createCommandRunner({ env: world.standIn.env });
      const plan = driver.execArgv('simctl', ['launch', 'com.example.app'], made);
      if (!plan.ok) throw new Error(plan.message);
      const launched = await run(plan.argv);
      expect(launched).toMatchObject({
        exitCode: 0,
        stdout: expect.stringMatching(/^com\.example\.app: \d+\n$/) as string,
      });
      const elsewhere = driver.execArgv('simctl', ['launch', 'com.example.app'], simulator);
      if (!elsewhere.ok) throw new Error(elsewhere.message);
      expect(await run(elsewhere.argv)).toMatchObject({
        exitCode: 148,
        stderr: `Invalid device: ${IPHONE_16_SHUTDOWN}\n`,
      });
    });

    it('is healthy while simctl answers, and unhealthy when xcrun is missing', async () => {
      await expect(driver.checkHealth()).resolves.toBeUndefined();
      expect(await world.standIn.calls()).toEqual([
        ['simctl', '--set', world.setDir, 'list', '-j', 'runtimes'],
      ]);
      const missing = world.driver({
        run: createCommandRunner({ env: { PATH: world.standIn.dir + '/nowhere' } }),
      });
      await expect(missing.checkHealth()).rejects.toThrow(/not found on PATH/);
    });

    it('has no physical devices to read or reset', async () => {
      await expect(driver.readPresence(simulator)).rejects.toThrow(/no physical device/);
    });
  },
);

describe('the name of a simulator made in the default set', () => {
  it('is simlock, the model and the short id of the name asked for', () => {
    expect(recordedName('simlock-iphone-16-3fa2c1', 'iPhone 16')).toBe('simlock iPhone 16 3fa2c1');
    expect(recordedName('a1b2c3', 'iPad Pro 13-inch (M4)')).toBe(
      'simlock iPad Pro 13-inch (M4) a1b2c3',
    );
    expect(recordedName('simlock iPhone 16 a1b2c3', 'iPhone 16')).toBe('simlock iPhone 16 a1b2c3');
  });
});

describe('simctl exec argv', () => {
  const dataDir = join(tmpdir(), 'simlock-agent-data');
  const setDir = join(dataDir, 'simctl-set');

  it('names the set before the subcommand and inserts the leased UDID right after it', () => {
    const run = (args: string[]) => driver().execArgv('simctl', args, simulator);
    const inOwnSet = (...rest: string[]) => ['xcrun', 'simctl', '--set', setDir, ...rest];
    expect(run(['launch', 'com.example.app', '--flag'])).toEqual({
      ok: true,
      argv: inOwnSet('launch', IPHONE_16_SHUTDOWN, 'com.example.app', '--flag'),
    });
    expect(run(['io', 'screenshot', 'shot.png'])).toEqual({
      ok: true,
      argv: inOwnSet('io', IPHONE_16_SHUTDOWN, 'screenshot', 'shot.png'),
    });
  });

  it('refuses subcommands that manage or list simulators', () => {
    for (const subcommand of ['list', 'boot', 'shutdown', 'erase', 'delete', 'create']) {
      expect(driver().execArgv('simctl', [subcommand], simulator)).toMatchObject({
        ok: false,
        code: 'TOOL_NOT_ALLOWED',
      });
    }
    expect(driver().execArgv('simctl', [], simulator)).toMatchObject({ ok: false });
  });

  it('refuses simctl on a physical device, and devicectl or adb on a simulator', () => {
    const phone = { ...simulator, physical: true };
    expect(driver().execArgv('simctl', ['launch', 'x'], phone)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(driver().execArgv('devicectl', ['device', 'info', 'apps'], simulator)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(driver().execArgv('adb', ['shell', 'ls'], simulator)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
  });

  function driver(): SimctlDriver {
    return new SimctlDriver({
      dataDir,
      run: () => Promise.reject(new Error('exec plans run nothing')),
    });
  }
});
