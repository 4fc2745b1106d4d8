// The adb driver's own place, continued: what avdmanager says when it cannot make an AVD, and AVDs
// of the default home adopted by name. Same stand-ins and world as adb-own.test.ts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from '../command.js';
import {
  agentDriver,
  AGENT_SERVER_PORT,
  IMAGE_34,
  IMAGE_35,
  PERSON_AVD,
  PHONE,
} from '../../../test/stand-ins/android-world.js';
import { androidWorldPerTest } from '../../../test/stand-ins/android-world-per-test.js';

const world = androidWorldPerTest();
const agentCalls = () => world.agentCalls();
const fast = { inProcess: true } as const;

describe('what avdmanager says when it cannot make an AVD', { timeout: 60_000 }, () => {
  it('(the stand-in asks its question on stdin when no profile is given, as avdmanager does)', async () => {
    const run = createCommandRunner({ env: world.standIns.env });
    const result = await run(['avdmanager', 'create', 'avd', '-n', 'asked', '-k', IMAGE_34], {
      input: 'no\n',
      env: { ANDROID_AVD_HOME: join(world.dataDir, 'avd') },
    });
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(result.stdout).toContain(
      'Auto-selecting single ABI x86_64\nDo you wish to create a custom hardware profile? [no] ',
    );
  });

  it('a profile it no longer has: the error names the tool, the image and what it said', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    world.standIns.update((state) => {
      state.profiles = state.profiles.filter((profile) => profile.id !== 'pixel_7');
    });
    await expect(
      driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1'),
    ).rejects.toThrow(
      `avdmanager create avd sl-1 (${IMAGE_34}, profile pixel_7): avdmanager has no device profile "pixel_7": Error: No device found matching --device pixel_7.`,
    );
  });

  it('an image the SDK folder has but avdmanager does not count as installed', async () => {
    const driver = agentDriver(world, fast);
    await driver.listDevices();
    world.standIns.update((state) => {
      state.images = state.images.filter((image) => image !== IMAGE_35);
    });
    await expect(
      driver.create({ platform: 'android', model: 'Pixel 7', os: '35' }, 'sl-1'),
    ).rejects.toThrow(
      new RegExp(
        `system image ${IMAGE_35} is not installed: Error: Package path is not valid\\. Valid system image paths are:\\n`,
      ),
    );
  });

  it('a full disk, and no AVD is left behind', async () => {
    const driver = agentDriver(world);
    await driver.listDevices();
    world.standIns.failNextCreate();
    await expect(
      driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1'),
    ).rejects.toThrow(
      `avdmanager create avd sl-1 (${IMAGE_34}, profile pixel_7): no disk space left for the AVD: Error: An error occurred while creating AVD: No space left on device`,
    );
    expect((await driver.listDevices()).devices.map((device) => device.id)).toEqual([PHONE]);
    await driver.create({ platform: 'android', model: 'Pixel 7', os: '34' }, 'sl-1');
  });

  it('a model or OS the host does not offer is refused before avdmanager runs', async () => {
    const driver = agentDriver(world, {
      ...fast,
      provision: { enabled: true, models: [], os: ['34'] },
    });
    await driver.listDevices();
    await expect(
      driver.create({ platform: 'android', model: 'Pixel 7', os: '35' }, 'sl-1'),
    ).rejects.toThrow('adb cannot make a Pixel 7 with API 35');
    await expect(
      driver.create({ platform: 'android', model: 'Television (1080p)', os: '34' }, 'sl-1'),
    ).rejects.toThrow('adb cannot make a Television (1080p) with API 34');
    expect((await agentCalls()).filter((call) => call.argv[0] === 'create')).toEqual([]);
  });
});

describe('adopted AVDs of the default home', { timeout: 60_000 }, () => {
  it('are listed, booted on the agent’s server and wiped, never deleted', async () => {
    world.standIns.addAvd(world.standIns.defaultAvdHome, 'CI_Pixel', IMAGE_34, 'pixel_3a_xl');
    const driver = agentDriver(world, {
      ...fast,
      adb: { serverPort: AGENT_SERVER_PORT, adopt: ['CI_Pixel'] },
    });
    const listing = await driver.listDevices();
    const adopted = listing.devices.find((device) => device.id === 'CI_Pixel');
    expect(adopted).toMatchObject({ model: 'Pixel 3a XL', os: '34', power: 'shutdown' });
    expect(listing.devices.some((device) => device.id === PERSON_AVD)).toBe(false);

    await driver.boot(adopted!);
    await driver.erase(adopted!);
    await driver.boot(adopted!);
    const boots = (await agentCalls()).filter(
      (call) => call.tool === 'emulator' && call.argv[0] === '-avd',
    );
    expect(
      boots.map((call) => [
        call.avdHome,
        call.env.ANDROID_AVD_HOME,
        call.env.ANDROID_ADB_SERVER_PORT,
      ]),
    ).toEqual([
      [world.standIns.defaultAvdHome, world.standIns.defaultAvdHome, '5137'],
      [world.standIns.defaultAvdHome, world.standIns.defaultAvdHome, '5137'],
    ]);
    await expect(driver.delete(adopted!)).rejects.toThrow(/never deletes CI_Pixel/);
    const state = await world.standIns.state();
    expect(state.homes[world.standIns.defaultAvdHome]?.CI_Pixel).toMatchObject({
      boots: 2,
      wipes: 1,
    });
    expect(
      (await agentCalls()).filter(
        (call) => call.tool === 'avdmanager' && call.argv[0] === 'delete',
      ),
    ).toEqual([]);
  });

  it('is unavailable while an emulator outside the agent’s server holds it', async () => {
    const driver = agentDriver(world, {
      ...fast,
      adb: { serverPort: AGENT_SERVER_PORT, adopt: [PERSON_AVD] },
    });
    const listing = await driver.listDevices();
    expect(listing.devices.find((device) => device.id === PERSON_AVD)).toMatchObject({
      power: 'unavailable',
    });
  });
});
