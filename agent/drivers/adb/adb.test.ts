import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommandRunner } from '../command.js';
import type { DriverDevice } from '../driver.js';
import { readTestdata, StandIns, type StandInRule } from '../../../test/stand-ins/stand-in.js';
import { AdbDriver } from './adb.js';
import {
  describeAvd,
  modelFromHardwareName,
  parseAdbDevices,
  presenceFromAdbState,
} from './adb-output.js';

const PHONE = '0A281FDD4003QK';
const dataDir = join(tmpdir(), 'simlock-adb-test-data');

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
    const nexus =
      'hw.device.name=Nexus 7\nimage.sysdir.1=system-images/android-34/default/x86_64/\n';
    expect(describeAvd('n7', nexus)).toMatchObject({ model: 'Nexus 7', class: 'tablet' });
    expect(describeAvd('n7', nexus, new Map([['Nexus 7', 'Nexus 7 (2012)']]))).toMatchObject({
      model: 'Nexus 7 (2012)',
      class: 'tablet',
    });
    expect(modelFromHardwareName('pixel_7_pro')).toBe('Pixel 7 Pro');
    expect(modelFromHardwareName('Nexus 5X')).toBe('Nexus 5X');
  });
});

// Stand-ins are real processes: on a loaded 2-core machine a test's dozen spawns can pass 5 s.
// Phones only (emulators: false): the stateful stand-ins of adb-own.test.ts cover the emulators.
describe('the adb driver against a stand-in adb, for phones', { timeout: 30_000 }, () => {
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
    standIns = await StandIns.create({ adb: adbRules });
    driver = new AdbDriver({
      dataDir,
      run: createCommandRunner({ env: standIns.env }),
      emulators: false,
    });
  });

  afterEach(async () => {
    await standIns.cleanup();
  });

  it('lists authorized phones of the default server, never its emulators, reading each once', async () => {
    const listing = await driver.listDevices();
    expect(listing.devices).toEqual([phone]);
    expect(listing.catalog).toEqual({ platforms: ['android'], models: [], runtimes: [] });
    expect(listing.makeable).toEqual([]);
    await driver.listDevices();
    const calls = await standIns.calls('adb');
    expect(calls.filter((argv) => argv.includes('ro.build.version.sdk'))).toEqual([
      ['-s', PHONE, 'shell', 'getprop', 'ro.build.version.sdk'],
    ]);
    expect(calls.some((argv) => argv.includes('emulator-5554') || argv.includes('-P'))).toBe(false);
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
  const driver = new AdbDriver({
    dataDir,
    run: () => Promise.reject(new Error('runs nothing')),
  });

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
