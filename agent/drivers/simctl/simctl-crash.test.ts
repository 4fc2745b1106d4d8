// A simulator that crashes, against the stateful simctl stand-in: the driver's check
// (`simctl getenv <udid> HOME`) answers on a booted simulator and fails on one that went down or
// never finished booting; a whole agent core over the driver boots a killed, leased simulator
// again under its lease, and gives the lease up when the simulator never finishes booting.
import { beforeEach, describe, expect, it } from 'vitest';
import { startQuietCore } from '../../../test/agent-core.js';
import { simctlPerTest } from '../../../test/stand-ins/simctl-per-test.js';
import type { AgentCore } from '../../core.js';
import type { DriverDevice } from '../driver.js';
import type { SimctlDriver } from './simctl.js';

const UDID = '2C4E6A8B-1D3F-4B5C-9E7A-0F1E2D3C4B5A';

describe('a simulator that crashes', { timeout: 60_000 }, () => {
  const world = simctlPerTest();
  let driver: SimctlDriver;

  beforeEach(async () => {
    driver = world.driver({ bootTimeoutMs: 1500 });
    await driver.listDevices(); // makes the set folder
    await world.standIn.addDevice(world.setDir, {
      udid: UDID,
      name: 'iPhone 16',
      state: 'Booted',
      boots: 1,
    });
  });

  const listed = async (): Promise<DriverDevice> => {
    const device = (await driver.listDevices()).devices.find((entry) => entry.id === UDID);
    if (device === undefined) throw new Error('the simulator is not listed');
    return device;
  };

  it('passes the check while booted, asking the simulator for its HOME in the own set', async () => {
    await world.standIn.clearCalls();
    await driver.checkDevice(await listed());
    expect((await world.standIn.calls()).at(-1)).toEqual([
      'simctl',
      '--set',
      world.setDir,
      'getenv',
      UDID,
      'HOME',
    ]);
  });

  it('is listed shut down once killed, and fails the check saying so', async () => {
    const device = await listed();
    await world.standIn.kill(world.setDir, UDID);
    expect((await listed()).power).toBe('shutdown');
    await expect(driver.checkDevice(device)).rejects.toThrow(
      `simctl getenv ${UDID} HOME exited 149: Unable to lookup in current state: Shutdown`,
    );
    // Booted again, it answers again.
    await driver.boot(device);
    await driver.checkDevice(await listed());
  });

  it('stays booting when its boot never completes: the boot times out, the check fails', async () => {
    const device = await listed();
    await world.standIn.kill(world.setDir, UDID);
    await world.standIn.setNeverBoots(world.setDir, UDID, true);
    await expect(driver.boot(device)).rejects.toThrow(/stopped after 1500 ms/);
    expect((await listed()).power).toBe('transitioning');
    await expect(driver.checkDevice(device)).rejects.toThrow(
      'Unable to lookup in current state: Booting',
    );
  });

  describe('under a lease, in a whole agent core', () => {
    async function leasedCore(): Promise<AgentCore> {
      // Its timers never fire: the test lists and probes when it wants to.
      const core = await startQuietCore(driver, ['simctl']);
      expect(await core.grant('lease-1', { platform: 'ios' })).toMatchObject({
        kind: 'granted',
        lease: { device: { id: UDID } },
      });
      return core;
    }

    it('boots a killed simulator again under its lease', async () => {
      const core = await leasedCore();
      await world.standIn.kill(world.setDir, UDID);
      await core.refresh();
      expect(core.recovery.healthOf('lease-1')?.recovery).toMatchObject({
        cause: 'shut down',
        crashes: 1,
      });
      await core.recovery.settled('lease-1');
      expect(core.recovery.healthOf('lease-1')?.condition?.reason).toBe('DeviceRecovered');
      const [simulator] = await world.standIn.devices(world.setDir);
      expect(simulator).toMatchObject({ state: 'Booted', boots: 2 });
      expect(core.execArgv('lease-1', 'simctl', ['listapps'])).toMatchObject({ ok: true });
      core.stop();
    });

    it('sees a simulator killed by its failed check on the probe, cause "shut down"', async () => {
      const core = await leasedCore();
      await world.standIn.kill(world.setDir, UDID);
      await core.recovery.probe();
      expect(core.recovery.healthOf('lease-1')?.recovery?.cause).toBe('shut down');
      await core.recovery.settled('lease-1');
      core.stop();
    });

    it('ends the lease and quarantines the simulator when it never finishes booting', async () => {
      const core = await leasedCore();
      await world.standIn.setNeverBoots(world.setDir, UDID, true);
      await world.standIn.kill(world.setDir, UDID);
      await core.refresh();
      await core.recovery.settled('lease-1');
      expect(core.recovery.healthOf('lease-1')?.lost).toMatch(
        /^the device iPhone 16 would not boot again after a crash: .*stopped after 1500 ms; it is quarantined and the lease is lost$/,
      );
      expect(core.inventory.quarantineOf(UDID)?.reason).toMatch(
        /^would not boot again after a crash: /,
      );
      expect(core.granter.lease('lease-1')).toBeUndefined();
      core.stop();
    });
  });
});
