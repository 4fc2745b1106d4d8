// The console ports of the agent's emulators while two of them are shut down and booted at once,
// as two leases ending together reclaim theirs (erase: kill, then boot again). The stand-ins run in
// process; a call held back, or one made early, puts them in the order that matters.
import { describe, expect, it } from 'vitest';
import type { CommandRunner, DetachedSpawner } from '../command.js';
import { agentDriver, AGENT_SERVER_PORT } from '../../../test/stand-ins/android-world.js';
import { androidWorldPerTest } from '../../../test/stand-ins/android-world-per-test.js';

const world = androidWorldPerTest();

/** Runs the in-process stand-ins, holding back the first `adb devices` after `emu kill` of `serial`. */
function runHoldingKillCheck(serial: string) {
  const tools = world.standIns.inProcess();
  let armed = false;
  let reached!: () => void;
  let release!: () => void;
  const checkReached = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const run: CommandRunner = async (argv, options) => {
    if (armed && argv.includes('devices')) {
      armed = false;
      reached();
      await released;
    }
    const result = await tools.run(argv, options);
    if (argv.includes(serial) && argv.includes('emu') && argv.includes('kill')) armed = true;
    return result;
  };
  return { run, spawnDetached: tools.spawnDetached, checkReached, release };
}

describe('the agent’s emulator ports', () => {
  it('keeps the port of an emulator being killed until it is gone: one booted beside it takes another', async () => {
    const held = runHoldingKillCheck('emulator-5600');
    const driver = agentDriver(world, {
      run: held.run,
      spawnDetached: held.spawnDetached,
      shutdownTimeoutMs: 3000,
    });
    await driver.listDevices();
    const first = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    const second = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-2');
    await driver.boot(first);
    await driver.boot(second);
    expect((await world.standIns.state()).servers[AGENT_SERVER_PORT]?.emulators).toEqual([
      5600, 5602,
    ]);

    // sl-1 is killed; before its kill looks whether it is gone, sl-2 is erased and booted again.
    const killingFirst = driver.shutdown(first);
    await held.checkReached;
    await driver.erase(second);
    await driver.boot(second);
    held.release();

    await expect(killingFirst).resolves.toBeUndefined();
    const state = await world.standIns.state();
    expect(state.servers[AGENT_SERVER_PORT]?.emulators).toEqual([5602]);
    expect(state.emulators[5602]?.avd).toBe('sl-2');
    expect(driver.execArgv('adb', ['shell', 'true'], second)).toMatchObject({
      argv: ['adb', '-P', '5137', '-s', 'emulator-5602', 'shell', 'true'],
    });
  });

  it('does not take an emulator that registered on its port first for its own: the boot fails, the other is left running', async () => {
    const tools = world.standIns.inProcess();
    let late = true;
    // An emulator of sl-1 that a previous life of the agent started just before it stopped
    // registers on 5600 after the port was found free, before sl-2's emulator starts there.
    const spawnDetached: DetachedSpawner = async (argv, options) => {
      if (late && argv.includes('sl-2')) {
        late = false;
        const stale = argv.map((arg) => (arg === 'sl-2' ? 'sl-1' : arg));
        await tools.spawnDetached(stale as [string, ...string[]], options);
      }
      await tools.spawnDetached(argv, options);
    };
    const driver = agentDriver(world, { run: tools.run, spawnDetached });
    await driver.listDevices();
    await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    const second = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-2');

    await expect(driver.boot(second)).rejects.toThrow(
      'sl-2 did not start on emulator-5600: sl-1 runs there',
    );
    const state = await world.standIns.state();
    expect(state.emulators[5600]?.avd).toBe('sl-1');
    const listed = (await driver.listDevices()).devices.filter((device) => !device.physical);
    expect(listed.map((device) => [device.id, device.power])).toEqual([
      ['sl-1', 'booted'],
      ['sl-2', 'shutdown'],
    ]);
  });
});
