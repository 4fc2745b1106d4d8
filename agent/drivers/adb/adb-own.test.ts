// The adb driver in its own place (an AVD home under the data directory, an adb server of its
// own), against stateful stand-ins of adb, emulator and avdmanager. Listing, making, booting and a
// failing avdmanager run them as processes (the environment and stdin each call gets); the other
// tests run the same stand-in code in process (`fast`), as each process still costs ~10 ms here.
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anEmulator } from '../../../test/fixtures/driver-devices.js';
import {
  agentDriver,
  AGENT_SERVER_PORT,
  IMAGE_35,
  PERSON_AVD,
  PHONE,
} from '../../../test/stand-ins/android-world.js';
import { androidWorldPerTest } from '../../../test/stand-ins/android-world-per-test.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const world = androidWorldPerTest();
const agentCalls = () => world.agentCalls();
const fast = { inProcess: true } as const;

// Stand-ins are real processes: on a loaded 2-core machine a test's few dozen spawns take seconds.
describe('the adb driver in its own place', { timeout: 60_000 }, () => {
  it('lists phones of the default server and nothing of the person’s, and what it can make', async () => {
    const driver = agentDriver(world);
    const listing = await driver.listDevices();
    expect(listing.devices).toEqual([
      {
        id: PHONE,
        name: `Pixel 7 ${PHONE}`,
        model: 'Pixel 7',
        platform: 'android',
        os: '34',
        physical: true,
        class: 'phone',
        power: 'booted',
      },
    ]);
    expect(listing.makeable).toEqual([
      { platform: 'android', model: 'Galaxy Nexus', class: 'phone', os: ['34', '35'] },
      { platform: 'android', model: 'Medium Phone', class: 'phone', os: ['34', '35'] },
      { platform: 'android', model: 'Nexus 7 (2012)', class: 'tablet', os: ['34', '35'] },
      { platform: 'android', model: 'Pixel 3a XL', class: 'phone', os: ['34', '35'] },
      { platform: 'android', model: 'Pixel 7', class: 'phone', os: ['34', '35'] },
      { platform: 'android', model: 'Pixel Tablet', class: 'tablet', os: ['34', '35'] },
      { platform: 'android', model: 'Resizable (Experimental)', class: 'phone', os: ['34', '35'] },
    ]);
    expect(listing.catalog.models.map((model) => model.name)).toContain('Pixel Tablet');
    expect(listing.catalog.runtimes).toEqual([
      { platform: 'android', version: '34' },
      { platform: 'android', version: '35' },
    ]);

    const calls = await agentCalls();
    const ownHome = join(world.dataDir, 'avd');
    // Its server is started by the agent, scanning nothing; AVDs are read in its own home only.
    expect(calls).toContainEqual(
      expect.objectContaining({
        argv: ['-P', '5137', 'start-server'],
        env: expect.objectContaining({ ADB_EMU: '0', ADB_USB: '0', ADB_MDNS: '0' }) as unknown,
      }),
    );
    const emulatorCalls = calls.filter((call) => call.tool === 'emulator');
    expect(emulatorCalls.map((call) => [call.argv, call.avdHome])).toEqual([
      [['-list-avds'], ownHome],
    ]);
    expect(calls.filter((call) => call.tool === 'avdmanager').map((call) => call.avdHome)).toEqual([
      ownHome,
    ]);
    const state = await world.standIns.state();
    expect(state.servers[AGENT_SERVER_PORT]).toMatchObject({ scansEmulators: false, usb: false });
    expect(state.servers[5037]).toMatchObject({ starts: 1, kills: 0, emulators: [5554] });
  });

  it('narrows what it offers by the config, in any case, and offers nothing when told not to', async () => {
    const narrowed = await agentDriver(world, {
      ...fast,
      provision: { enabled: true, models: ['pixel 7', 'PIXEL_TABLET'], os: ['35'] },
    }).listDevices();
    expect(narrowed.makeable).toEqual([
      { platform: 'android', model: 'Pixel 7', class: 'phone', os: ['35'] },
      { platform: 'android', model: 'Pixel Tablet', class: 'tablet', os: ['35'] },
    ]);
    expect(narrowed.catalog.runtimes).toEqual([{ platform: 'android', version: '35' }]);
    const off = await agentDriver(world, {
      ...fast,
      provision: { enabled: false, models: [], os: [] },
    }).listDevices();
    expect(off.makeable).toEqual([]);
    expect(off.catalog.models).toEqual([]);
  });

  it('makes an AVD in its own home with avdmanager, then lists it shut down', async () => {
    const driver = agentDriver(world);
    await driver.listDevices();
    const made = await driver.create({ platform: 'android', model: 'pixel 7', os: '35' }, 'sl-1');
    expect(made).toEqual({
      id: 'sl-1',
      name: 'sl-1',
      model: 'Pixel 7',
      platform: 'android',
      os: '35',
      physical: false,
      class: 'phone',
      power: 'shutdown',
      deletable: true,
    });
    const ownHome = join(world.dataDir, 'avd');
    expect(await agentCalls()).toContainEqual(
      expect.objectContaining({
        tool: 'avdmanager',
        argv: ['create', 'avd', '-n', 'sl-1', '-k', IMAGE_35, '-d', 'pixel_7'],
        avdHome: ownHome,
      }),
    );
    expect(await readFile(join(ownHome, 'sl-1.avd', 'config.ini'), 'utf8')).toContain(
      'hw.device.name=pixel_7',
    );
    expect((await driver.listDevices()).devices).toContainEqual(made);
    const state = await world.standIns.state();
    expect(Object.keys(state.homes[ownHome] ?? {})).toEqual(['sl-1']);
    expect(Object.keys(state.homes[world.standIns.defaultAvdHome] ?? {})).toEqual([PERSON_AVD]);
  });

  it('boots its AVDs on its own server above 5585, where the person’s server never sees them', async () => {
    const driver = agentDriver(world);
    await driver.listDevices();
    const first = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    const second = await driver.create(
      { platform: 'android', model: 'Pixel Tablet', os: '35' },
      'sl-2',
    );
    await driver.boot(first);
    await driver.boot(second);

    const boots = (await agentCalls()).filter(
      (call) => call.tool === 'emulator' && call.argv[0] === '-avd',
    );
    expect(
      boots.map((call) => [call.argv.slice(0, 4), call.avdHome, call.env.ANDROID_ADB_SERVER_PORT]),
    ).toEqual([
      [['-avd', 'sl-1', '-port', '5600'], join(world.dataDir, 'avd'), '5137'],
      [['-avd', 'sl-2', '-port', '5602'], join(world.dataDir, 'avd'), '5137'],
    ]);
    const state = await world.standIns.state();
    expect(state.servers[AGENT_SERVER_PORT]?.emulators).toEqual([5600, 5602]);
    expect(state.servers[5037]?.emulators).toEqual([5554]);
    expect(driver.execArgv('adb', ['shell', 'pm', 'list', 'packages'], second)).toEqual({
      ok: true,
      argv: ['adb', '-P', '5137', '-s', 'emulator-5602', 'shell', 'pm', 'list', 'packages'],
    });
    const listed = (await driver.listDevices()).devices.filter((device) => !device.physical);
    expect(listed.map((device) => [device.id, device.power])).toEqual([
      ['sl-1', 'booted'],
      ['sl-2', 'booted'],
    ]);
    // A restarted agent finds its running emulators again by asking its own server.
    const restarted = agentDriver(world);
    const again = (await restarted.listDevices()).devices.filter((device) => !device.physical);
    expect(again.map((device) => [device.id, device.power])).toEqual([
      ['sl-1', 'booted'],
      ['sl-2', 'booted'],
    ]);
  });

  it('erases by shutting down and wiping at the next boot, even after a restart', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    const made = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    await driver.boot(made);
    await driver.erase(made);
    expect(driver.execArgv('adb', ['shell'], made)).toMatchObject({
      ok: false,
      code: 'UNAVAILABLE',
    });
    expect((await world.standIns.state()).servers[AGENT_SERVER_PORT]?.emulators).toEqual([]);

    const restarted = agentDriver(world, fast);
    await restarted.listDevices();
    await restarted.boot(made);
    const boots = (await agentCalls()).filter(
      (call) => call.tool === 'emulator' && call.argv[0] === '-avd',
    );
    expect(boots.map((call) => call.argv.includes('-wipe-data'))).toEqual([false, true]);
    const avd = (await world.standIns.state()).homes[join(world.dataDir, 'avd')]?.['sl-1'];
    expect(avd).toMatchObject({ boots: 2, wipes: 1 });
    await restarted.shutdown(made);
    await restarted.boot(made);
    expect(
      (await world.standIns.state()).homes[join(world.dataDir, 'avd')]?.['sl-1'],
    ).toMatchObject({
      boots: 3,
      wipes: 1,
    });
  });

  it('deletes an AVD it made, running or not, from its own home', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    const made = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    await driver.boot(made);
    await driver.delete(made);
    const ownHome = join(world.dataDir, 'avd');
    expect(await exists(join(ownHome, 'sl-1.ini'))).toBe(false);
    expect(await exists(join(ownHome, 'sl-1.avd'))).toBe(false);
    expect(await agentCalls()).toContainEqual(
      expect.objectContaining({
        tool: 'avdmanager',
        argv: ['delete', 'avd', '-n', 'sl-1'],
        avdHome: ownHome,
      }),
    );
    expect((await driver.listDevices()).devices.map((device) => device.id)).toEqual([PHONE]);
    // The name is free again.
    await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
  });

  it('boots two AVDs at once on two console ports', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    const first = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    const second = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-2');
    await Promise.all([driver.boot(first), driver.boot(second)]);
    const state = await world.standIns.state();
    expect(
      Object.values(state.emulators)
        .map((emulator) => emulator.avd)
        .sort(),
    ).toEqual([PERSON_AVD, 'sl-1', 'sl-2']);
    const serials = [first, second].map((device) => driver.execArgv('adb', ['shell'], device));
    expect(serials).toEqual([
      { ok: true, argv: ['adb', '-P', '5137', '-s', 'emulator-5600', 'shell'] },
      { ok: true, argv: ['adb', '-P', '5137', '-s', 'emulator-5602', 'shell'] },
    ]);
  });

  it('boots on the next console port whose pair nothing else on the host holds', async () => {
    const busy = new Set([5600, 5603]);
    const driver = agentDriver(world, {
      ...fast,
      isPortFree: (port) => Promise.resolve(!busy.has(port)),
    });
    await driver.listDevices();
    const made = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    await driver.boot(made);
    expect(driver.execArgv('adb', ['shell'], made)).toMatchObject({
      ok: true,
      argv: ['adb', '-P', '5137', '-s', 'emulator-5604', 'shell'],
    });
  });

  it('refuses a server port of the default server or of the emulators', () => {
    expect(() => agentDriver(world, { ...fast, adb: { serverPort: 5037, adopt: [] } })).toThrow(
      /default adb server's port/,
    );
    expect(() =>
      agentDriver(world, {
        ...fast,
        env: { ...world.standIns.env, ANDROID_ADB_SERVER_PORT: '5137' },
      }),
    ).toThrow(/default adb server's port/);
    expect(() => agentDriver(world, { ...fast, adb: { serverPort: 5601, adopt: [] } })).toThrow(
      /emulators' console and adb ports/,
    );
  });

  it('offers nothing, and says why, where no Android SDK is found', async () => {
    const env = { ...world.standIns.env };
    delete env.ANDROID_HOME;
    const driver = agentDriver(world, { ...fast, env });
    const listing = await driver.listDevices();
    expect(listing.makeable).toEqual([]);
    expect(listing.devices.map((device) => device.id)).toEqual([PHONE]);
    expect(driver.provisionProblem).toMatch(/no Android SDK found \(set ANDROID_HOME\)/);
  });

  it('forgets an AVD removed from its home by someone else', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    const made = await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
    await world.standIns.inProcess().run(['avdmanager', 'delete', 'avd', '-n', 'sl-1'], {
      env: { ANDROID_AVD_HOME: join(world.dataDir, 'avd') },
    });
    expect((await driver.listDevices()).devices.map((device) => device.id)).toEqual([PHONE]);
    await expect(driver.boot(made)).rejects.toThrow(/neither in the agent's AVD home nor adopted/);
  });

  it('refuses to touch an AVD it did not make or adopt', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    const person = anEmulator(PERSON_AVD, { name: PERSON_AVD });
    const actions = [
      () => driver.boot(person),
      () => driver.shutdown(person),
      () => driver.erase(person),
      () => driver.delete(person),
    ];
    for (const action of actions) {
      await expect(action()).rejects.toThrow(/neither in the agent's AVD home nor adopted/);
    }
    await expect(
      driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'bad name'),
    ).rejects.toThrow(/a-z A-Z 0-9/);
  });
});
