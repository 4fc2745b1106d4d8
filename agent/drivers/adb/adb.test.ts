import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommandRunner, createDetachedSpawner } from '../command.js';
import type { DriverDevice } from '../driver.js';
import { readTestdata, StandIns, type StandInRule } from '../testing/stand-in.js';
import { AdbDriver } from './adb.js';
import {
  describeAvd,
  modelFromHardwareName,
  parseAdbDevices,
  presenceFromAdbState,
} from './adb-output.js';

const PHONE = '0A281FDD4003QK';
const avdHome = fileURLToPath(new URL('testdata/avd', import.meta.url));

const phone: DriverDevice = {
  id: PHONE,
  name: `Pixel 7 ${PHONE}`,
  model: 'Pixel 7',
  platform: 'android',
  os: '34',
  physical: true,
  class: 'phone',
  power: 'booted',
};

describe('parsing recorded adb output', () => {
  it('reads serials, states and properties from adb devices -l', async () => {
    const entries = parseAdbDevices(await readTestdata(import.meta.url, 'devices-l.txt'));
    expect(entries.map((entry) => [entry.serial, entry.state])).toEqual([
      ['emulator-5554', 'device'],
      ['R58N12ABCDE', 'unauthorized'],
      [PHONE, 'device'],
      ['HT7A1B2C3D4E', 'offline'],
    ]);
    expect(entries[2]?.properties.model).toBe('Pixel_7');
  });

  it('skips the adb server chatter and refuses a serial that is not one', () => {
    expect(
      parseAdbDevices('* daemon not running; starting now at tcp:5037\n* daemon started\n'),
    ).toEqual([]);
    expect(() => parseAdbDevices('List of devices attached\nbad$serial device\n')).toThrow();
  });

  it('maps adb states to presence', () => {
    expect(presenceFromAdbState('device')).toEqual({ present: true });
    expect(presenceFromAdbState('unauthorized')).toEqual({ present: false, reason: 'untrusted' });
    expect(presenceFromAdbState('offline')).toEqual({ present: false, reason: 'not-present' });
    expect(presenceFromAdbState(undefined)).toEqual({ present: false, reason: 'not-present' });
  });

  it('describes an AVD from its config.ini: model, class and API level', async () => {
    const tablet = await readTestdata(import.meta.url, 'avd/Pixel_Tablet_API_35.avd/config.ini');
    expect(describeAvd('Pixel_Tablet_API_35', tablet)).toEqual({
      name: 'Pixel_Tablet_API_35',
      displayName: 'Pixel Tablet API 35',
      model: 'Pixel Tablet',
      class: 'tablet',
      apiLevel: '35',
    });
    expect(describeAvd('broken', 'hw.device.name=pixel_7\n')).toBeUndefined();
    expect(modelFromHardwareName('pixel_7_pro')).toBe('Pixel 7 Pro');
    expect(modelFromHardwareName('Nexus 5X')).toBe('Nexus 5X');
  });
});

// Stand-ins are real processes: on a loaded 2-core machine a test's dozen spawns can pass 5 s.
describe('the adb driver against stand-in adb and emulator', { timeout: 30_000 }, () => {
  let standIns: StandIns;
  let driver: AdbDriver;
  let adbRules: StandInRule[];

  beforeEach(async () => {
    const devices = await readTestdata(import.meta.url, 'devices-l.txt');
    adbRules = [
      { argv: ['devices', '-l'], stdout: devices },
      { argv: ['version'], stdout: 'Android Debug Bridge version 1.0.41\n' },
      { argv: ['-s', 'emulator-5554', 'emu', 'avd', 'name'], stdout: 'Pixel_7_API_34\r\nOK\r\n' },
      { argv: ['-s', 'emulator-5554', 'shell', 'getprop', 'sys.boot_completed'], stdout: '1\n' },
      { argv: ['-s', PHONE, 'shell', 'getprop', 'ro.build.version.sdk'], stdout: '34\n' },
      { argv: ['-s', PHONE, 'shell', 'getprop', 'ro.product.model'], stdout: 'Pixel 7\n' },
      { argv: ['-s', PHONE, 'shell', 'getprop', 'ro.build.characteristics'], stdout: 'nosdcard\n' },
    ];
    standIns = await StandIns.create({
      adb: adbRules,
      emulator: [
        { argv: ['-list-avds'], stdout: 'Pixel_7_API_34\nPixel_Tablet_API_35\n' },
        {
          argv: [
            '-avd',
            'Pixel_Tablet_API_35',
            '-port',
            '5556',
            '-no-window',
            '-no-audio',
            '-no-boot-anim',
          ],
        },
        {
          argv: [
            '-avd',
            'Pixel_7_API_34',
            '-port',
            '5554',
            '-no-window',
            '-no-audio',
            '-no-boot-anim',
            '-wipe-data',
          ],
        },
      ],
    });
    driver = new AdbDriver({
      run: createCommandRunner({ env: standIns.env }),
      spawnDetached: createDetachedSpawner(standIns.env),
      avdHome,
      pollIntervalMs: 10,
      bootTimeoutMs: 20_000,
      shutdownTimeoutMs: 20_000,
    });
  });

  afterEach(async () => {
    await standIns.cleanup();
  });

  it('lists AVDs (running or not) by name and authorized phones by serial', async () => {
    const listing = await driver.listDevices();
    expect(listing.devices).toEqual([
      {
        id: 'Pixel_7_API_34',
        name: 'Pixel 7 API 34',
        model: 'Pixel 7',
        platform: 'android',
        os: '34',
        physical: false,
        class: 'phone',
        power: 'booted',
      },
      {
        id: 'Pixel_Tablet_API_35',
        name: 'Pixel Tablet API 35',
        model: 'Pixel Tablet',
        platform: 'android',
        os: '35',
        physical: false,
        class: 'tablet',
        power: 'shutdown',
      },
      phone,
    ]);
    expect(listing.catalog).toEqual({
      platforms: ['android'],
      models: [
        { name: 'Pixel 7', platform: 'android', class: 'phone' },
        { name: 'Pixel Tablet', platform: 'android', class: 'tablet' },
      ],
      runtimes: [
        { platform: 'android', version: '34' },
        { platform: 'android', version: '35' },
      ],
    });
  });

  it('reads the API level with getprop once per phone', async () => {
    await driver.listDevices();
    await driver.listDevices();
    const getprops = (await standIns.calls('adb')).filter((argv) =>
      argv.includes('ro.build.version.sdk'),
    );
    expect(getprops).toEqual([['-s', PHONE, 'shell', 'getprop', 'ro.build.version.sdk']]);
  });

  it('boots an AVD on the next free port and waits for boot_completed', async () => {
    await standIns.setRules('adb', [
      ...adbRules,
      {
        argv: ['-s', 'emulator-5556', 'shell', 'getprop', 'sys.boot_completed'],
        responses: [
          { exitCode: 1, stderr: "adb: device 'emulator-5556' not found\n" },
          { stdout: '\n' },
          { stdout: '1\n' },
        ],
      },
    ]);
    const [, tablet] = (await driver.listDevices()).devices;
    await driver.boot(tablet!);
    await standIns.waitForCall('emulator', [
      '-avd',
      'Pixel_Tablet_API_35',
      '-port',
      '5556',
      '-no-window',
      '-no-audio',
      '-no-boot-anim',
    ]);
    expect(driver.execArgv('adb', ['shell', 'pm', 'list', 'packages'], tablet!)).toEqual({
      ok: true,
      argv: ['adb', '-s', 'emulator-5556', 'shell', 'pm', 'list', 'packages'],
    });
  });

  it('erases an emulator by shutting it down and wiping it at its next boot', async () => {
    const devices = await readTestdata(import.meta.url, 'devices-l.txt');
    const withoutEmulator = devices.replace(/^emulator-5554.*\n/m, '');
    await standIns.setRules('adb', [
      { argv: ['devices', '-l'], responses: [{ stdout: devices }, { stdout: withoutEmulator }] },
      ...adbRules.slice(1),
      { argv: ['-s', 'emulator-5554', 'emu', 'kill'], stdout: 'OK: killing emulator, bye bye\n' },
    ]);
    const [pixel] = (await driver.listDevices()).devices;
    await driver.erase(pixel!);
    expect(await standIns.calls('adb')).toContainEqual(['-s', 'emulator-5554', 'emu', 'kill']);
    expect(driver.execArgv('adb', ['shell'], pixel!)).toMatchObject({
      ok: false,
      code: 'UNAVAILABLE',
    });
    await driver.boot(pixel!);
    await standIns.waitForCall('emulator', [
      '-avd',
      'Pixel_7_API_34',
      '-port',
      '5554',
      '-no-window',
      '-no-audio',
      '-no-boot-anim',
      '-wipe-data',
    ]);
  });

  it('reads presence of phones: present, untrusted, not present', async () => {
    expect(await driver.readPresence(phone)).toEqual({ present: true });
    expect(await driver.readPresence({ ...phone, id: 'R58N12ABCDE' })).toEqual({
      present: false,
      reason: 'untrusted',
    });
    expect(await driver.readPresence({ ...phone, id: 'HT7A1B2C3D4E' })).toEqual({
      present: false,
      reason: 'not-present',
    });
    expect(await driver.readPresence({ ...phone, id: 'unplugged' })).toEqual({
      present: false,
      reason: 'not-present',
    });
  });

  it('resets a phone by uninstalling only the packages installed since the baseline', async () => {
    const listArgv = ['-s', PHONE, 'shell', 'pm', 'list', 'packages', '-3'];
    await standIns.setRules('adb', [
      {
        argv: listArgv,
        responses: [
          { stdout: await readTestdata(import.meta.url, 'packages-before.txt') },
          { stdout: await readTestdata(import.meta.url, 'packages-after.txt') },
        ],
      },
      { argv: ['-s', PHONE, 'uninstall', 'com.example.undertest'], stdout: 'Success\n' },
    ]);
    const baseline = await driver.readResetBaseline(phone);
    await driver.reset(phone, baseline);
    expect(await standIns.calls('adb')).toEqual([
      listArgv,
      listArgv,
      ['-s', PHONE, 'uninstall', 'com.example.undertest'],
    ]);
  });

  it('is healthy while adb answers', async () => {
    await expect(driver.checkHealth()).resolves.toBeUndefined();
  });
});

describe('adb exec argv', () => {
  const driver = new AdbDriver({ run: () => Promise.reject(new Error('runs nothing')), avdHome });

  it('aims adb at the leased serial with -s', () => {
    expect(driver.execArgv('adb', ['shell', 'getprop', 'ro.product.model'], phone)).toEqual({
      ok: true,
      argv: ['adb', '-s', PHONE, 'shell', 'getprop', 'ro.product.model'],
    });
  });

  it('refuses global options that would retarget adb, and host commands', () => {
    for (const args of [['-s', 'other', 'shell'], ['-d', 'shell'], ['devices'], ['connect', 'x']]) {
      expect(driver.execArgv('adb', args, phone)).toMatchObject({
        ok: false,
        code: 'TOOL_NOT_ALLOWED',
      });
    }
  });

  it('refuses simctl and devicectl on an Android device', () => {
    expect(driver.execArgv('devicectl', ['device', 'info', 'apps'], phone)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(driver.execArgv('simctl', ['launch'], phone)).toMatchObject({ ok: false });
  });
});
