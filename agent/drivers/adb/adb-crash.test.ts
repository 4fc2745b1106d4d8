// An emulator that crashes, against the stateful adb, emulator and avdmanager stand-ins (real
// processes): the driver's check (`getprop sys.boot_completed` on the agent's server) answers on a
// booted emulator and fails once its process exited (its serial gone from `adb devices`) or while
// it never finishes booting; a whole agent core over the driver starts the emulator of the same
// AVD again under its lease, and gives the lease up when it never finishes booting.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startQuietCore } from '../../../test/agent-core.js';
import {
  agentDriver,
  AGENT_SERVER_PORT,
  androidWorld,
  type AndroidWorld,
} from '../../../test/stand-ins/android-world.js';
import type { AgentCore } from '../../core.js';
import type { DriverDevice } from '../driver.js';
import type { AdbDriver } from './adb.js';

const AVD = 'sl-crash';

describe('an emulator that crashes', { timeout: 60_000 }, () => {
  let world: AndroidWorld;
  let driver: AdbDriver;
  let device: DriverDevice;

  beforeEach(async () => {
    world = await androidWorld();
    driver = agentDriver(world, { bootTimeoutMs: 1500 });
    await driver.listDevices();
    device = await driver.create({ platform: 'android', model: 'Pixel Tablet', os: '35' }, AVD);
    await driver.boot(device);
  });

  afterEach(async () => {
    await world.standIns.cleanup();
  });

  const listed = async (): Promise<DriverDevice> => {
    const found = (await driver.listDevices()).devices.find((entry) => entry.id === AVD);
    if (found === undefined) throw new Error('the AVD is not listed');
    return found;
  };
  const serial = async (): Promise<string | undefined> =>
    Object.entries((await world.standIns.state()).emulators).find(
      ([, emu]) => emu.avd === AVD,
    )?.[0];

  it('passes the check while booted, asking the emulator on the agent server', async () => {
    await driver.checkDevice(await listed());
    const port = await serial();
    expect((await world.standIns.calls()).at(-1)).toMatchObject({
      tool: 'adb',
      argv: [
        '-P',
        String(AGENT_SERVER_PORT),
        '-s',
        `emulator-${port}`,
        'shell',
        'getprop',
        'sys.boot_completed',
      ],
    });
  });

  it('fails the check once its process exited, and is listed shut down', async () => {
    const port = await serial();
    world.standIns.killEmulator(AVD);
    await expect(driver.checkDevice(device)).rejects.toThrow(
      `adb -P ${AGENT_SERVER_PORT} -s emulator-${port} shell getprop sys.boot_completed exited 1: adb: device 'emulator-${port}' not found`,
    );
    expect((await listed()).power).toBe('shutdown');
    await expect(driver.checkDevice(device)).rejects.toThrow(`emulator ${AVD} is not running`);
  });

  it('times out a boot that never completes, the check saying it has not booted', async () => {
    world.standIns.killEmulator(AVD);
    world.standIns.setNeverBoots(AVD, true);
    await driver.listDevices();
    await expect(driver.boot(device)).rejects.toThrow(/did not finish booting .* within 1500 ms/);
    // The driver stopped the half-booted emulator; one started by someone else is seen booting.
    expect(await serial()).toBeUndefined();
    const person = world.standIns.inProcess({
      ...world.standIns.env,
      ANDROID_AVD_HOME: `${world.dataDir}/avd`,
      ANDROID_ADB_SERVER_PORT: String(AGENT_SERVER_PORT),
    });
    await person.spawnDetached(['emulator', '-avd', AVD, '-port', '5610']);
    expect((await listed()).power).toBe('transitioning');
  });

  describe('under a lease, in a whole agent core', () => {
    async function leasedCore(): Promise<AgentCore> {
      // The same stand-ins in process: the core's many calls take a moment, not seconds.
      driver = agentDriver(world, { bootTimeoutMs: 1500, inProcess: true });
      // Its timers never fire: the test lists and probes when it wants to.
      const core = await startQuietCore(driver, ['adb']);
      expect(await core.grant('lease-1', { platform: 'android', class: 'tablet' })).toMatchObject({
        kind: 'granted',
        lease: { device: { id: AVD } },
      });
      return core;
    }

    it('starts the emulator of the same AVD again under its lease', async () => {
      const core = await leasedCore();
      world.standIns.killEmulator(AVD);
      await core.refresh();
      expect(core.recovery.healthOf('lease-1')?.recovery).toMatchObject({
        cause: 'emulator process exited',
        crashes: 1,
      });
      await core.recovery.settled('lease-1');
      expect(core.recovery.healthOf('lease-1')?.condition?.reason).toBe('DeviceRecovered');
      expect(await serial()).toBeDefined();
      const state = await world.standIns.state();
      expect(state.homes[`${world.dataDir}/avd`]?.[AVD]?.boots).toBe(2);
      expect(core.execArgv('lease-1', 'adb', ['shell', 'true'])).toMatchObject({ ok: true });
      core.stop();
    });

    it('sees an exited emulator on the probe, by its failed check', async () => {
      const core = await leasedCore();
      world.standIns.killEmulator(AVD);
      await core.recovery.probe();
      expect(core.recovery.healthOf('lease-1')?.recovery?.cause).toBe('emulator process exited');
      await core.recovery.settled('lease-1');
      core.stop();
    });

    it('ends the lease and quarantines the AVD when its emulator never finishes booting', async () => {
      const core = await leasedCore();
      world.standIns.setNeverBoots(AVD, true);
      world.standIns.killEmulator(AVD);
      await core.refresh();
      await core.recovery.settled('lease-1');
      expect(core.recovery.healthOf('lease-1')?.lost).toMatch(
        /would not boot again after a crash: .*did not finish booting .* within 1500 ms; it is quarantined and the lease is lost$/,
      );
      expect(core.inventory.quarantineOf(AVD)).toBeDefined();
      expect(core.granter.lease('lease-1')).toBeUndefined();
      core.stop();
    });
  });

  it('keeps an emulator booted while a listing was reading `adb devices` as running', async () => {
    // A listing whose `adb devices` was read before a boot registered its emulator answers after
    // the boot: it must not forget the new emulator's serial (the driver would then call the
    // device not running, the agent's probe a crash, and kill the emulator it had just booted).
    world.standIns.killEmulator(AVD);
    await driver.listDevices();
    const tools = world.standIns.inProcess(world.standIns.env);
    let armed = false;
    let reached = (): void => undefined;
    let release = (): void => undefined;
    driver = agentDriver(world, {
      spawnDetached: tools.spawnDetached,
      run: async (argv, options) => {
        const answer = await tools.run(argv, options);
        if (armed && argv.includes('-P') && argv.includes('devices')) {
          armed = false;
          reached();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return answer;
      },
    });
    await driver.listDevices();
    armed = true;
    const readDevices = new Promise<void>((resolve) => (reached = resolve));
    const listing = driver.listDevices();
    await readDevices;
    await driver.boot(device);
    release();
    await listing;
    await expect(driver.checkDevice(device)).resolves.toBeUndefined();
  });
});
