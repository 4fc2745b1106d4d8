import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aPhone } from '../../../test/fixtures/driver-devices.js';
import { createCommandRunner } from '../command.js';
import { JSON_OUTPUT, readTestdata, StandIns } from '../../../test/stand-ins/stand-in.js';
import { DevicectlDriver, parseDevicectlDevices, presenceFromListing } from './devicectl.js';

const IPHONE = '00008110-001A2B3C4D5E';
const IPAD = '00008103-000A11B22C33';
const UNPAIRED = '00008140-00112233AABB';

const iphone = aPhone(IPHONE, { name: 'QA iPhone 15 Pro' });

const listArgv = ['devicectl', 'list', 'devices', '--json-output', JSON_OUTPUT];
const lockStateArgv = (udid: string): string[] => [
  'devicectl',
  'device',
  'info',
  'lockState',
  '--device',
  udid,
  '--json-output',
  JSON_OUTPUT,
];

describe('parsing a recorded devicectl listing', () => {
  it('lists physical iPhones and iPads by UDID with marketing name, OS and class', async () => {
    const devices = parseDevicectlDevices(await readTestdata(import.meta.url, 'list-devices.json'));
    expect(devices).toEqual([
      {
        id: IPHONE,
        name: 'QA iPhone 15 Pro',
        model: 'iPhone 15 Pro',
        platform: 'ios',
        os: '18.4',
        physical: true,
        class: 'phone',
        power: 'booted',
      },
      {
        id: IPAD,
        name: 'QA iPad',
        model: 'iPad Air 11-inch (M2)',
        platform: 'ios',
        os: '17.5.1',
        physical: true,
        class: 'tablet',
        power: 'unavailable',
      },
      {
        id: UNPAIRED,
        name: 'Borrowed iPhone',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.3',
        physical: true,
        class: 'phone',
        power: 'unavailable',
      },
    ]);
  });

  it('reads presence: connected is for lockState to decide, unpaired is untrusted, tunnel unavailable or unlisted is not present', async () => {
    const json = await readTestdata(import.meta.url, 'list-devices.json');
    expect(presenceFromListing(json, IPHONE)).toBeUndefined();
    expect(presenceFromListing(json, UNPAIRED)).toEqual({ present: false, reason: 'untrusted' });
    expect(presenceFromListing(json, IPAD)).toEqual({ present: false, reason: 'not-present' });
    expect(presenceFromListing(json, 'gone')).toEqual({ present: false, reason: 'not-present' });
  });
});

// Stand-ins are real processes: on a loaded 2-core machine a test's spawns can pass 5 s.
describe('the devicectl driver against a stand-in xcrun', { timeout: 30_000 }, () => {
  let standIns: StandIns;
  let driver: DevicectlDriver;

  beforeEach(async () => {
    const listing = await readTestdata(import.meta.url, 'list-devices.json');
    standIns = await StandIns.create({
      xcrun: [
        { argv: listArgv, jsonOutput: listing },
        {
          argv: lockStateArgv(IPHONE),
          jsonOutput: await readTestdata(import.meta.url, 'lock-state-unlocked.json'),
        },
      ],
    });
    driver = new DevicectlDriver({ run: createCommandRunner({ env: standIns.env }) });
  });

  afterEach(async () => {
    await standIns.cleanup();
  });

  it('lists devices through a json output file, and offers iOS with no virtual models', async () => {
    const listing = await driver.listDevices();
    expect(listing.catalog).toEqual({ platforms: ['ios'], models: [], runtimes: [] });
    expect(listing.devices.map((device) => device.id)).toEqual([IPHONE, IPAD, UNPAIRED]);
    const [call] = await standIns.calls('xcrun');
    expect(call?.slice(0, 4)).toEqual(['devicectl', 'list', 'devices', '--json-output']);
  });

  it('reads a connected, unlocked iPhone as present, asking lockState about that UDID', async () => {
    expect(await driver.readPresence(iphone)).toEqual({ present: true });
    const calls = await standIns.calls('xcrun');
    expect(calls[1]?.slice(0, 6)).toEqual(lockStateArgv(IPHONE).slice(0, 6));
  });

  it('reads a locked iPhone as not present, reason locked', async () => {
    await standIns.setRules('xcrun', [
      { argv: listArgv, jsonOutput: await readTestdata(import.meta.url, 'list-devices.json') },
      {
        argv: lockStateArgv(IPHONE),
        jsonOutput: await readTestdata(import.meta.url, 'lock-state-locked.json'),
      },
    ]);
    expect(await driver.readPresence(iphone)).toEqual({ present: false, reason: 'locked' });
  });

  it('reads an unpaired iPhone as untrusted without asking lockState', async () => {
    expect(await driver.readPresence({ ...iphone, id: UNPAIRED })).toEqual({
      present: false,
      reason: 'untrusted',
    });
    expect(await standIns.calls('xcrun')).toHaveLength(1);
  });

  it('throws when devicectl fails, so the watcher keeps the last read', async () => {
    await standIns.setRules('xcrun', [
      { argv: listArgv, exitCode: 1, stderr: 'ERROR: CoreDevice service unavailable\n' },
    ]);
    await expect(driver.readPresence(iphone)).rejects.toThrow(/CoreDevice service unavailable/);
  });

  it('resets a phone by uninstalling only the apps installed since the baseline', async () => {
    const appsArgv = [
      'devicectl',
      'device',
      'info',
      'apps',
      '--device',
      IPHONE,
      '--json-output',
      JSON_OUTPUT,
    ];
    const uninstallArgv = [
      'devicectl',
      'device',
      'uninstall',
      'app',
      '--device',
      IPHONE,
      'com.example.under-test',
    ];
    await standIns.setRules('xcrun', [
      {
        argv: appsArgv,
        responses: [
          { jsonOutput: await readTestdata(import.meta.url, 'apps-before.json') },
          { jsonOutput: await readTestdata(import.meta.url, 'apps-after.json') },
        ],
      },
      { argv: uninstallArgv },
    ]);
    const baseline = await driver.readResetBaseline(iphone);
    expect(baseline).toEqual({ apps: ['com.example.keeper'] });
    await driver.reset(iphone, baseline);
    const calls = await standIns.calls('xcrun');
    expect(calls).toHaveLength(3);
    expect(calls[2]).toEqual(uninstallArgv);
  });

  it('does not boot, shut down or erase a phone', async () => {
    await expect(driver.boot(iphone)).rejects.toThrow(/does not boot/);
    await expect(driver.erase(iphone)).rejects.toThrow(/use reset/);
  });
});

describe('devicectl exec argv', () => {
  const driver = new DevicectlDriver({ run: () => Promise.reject(new Error('runs nothing')) });

  it('aims the command at the leased UDID with --device after the command words', () => {
    expect(driver.execArgv('devicectl', ['device', 'info', 'apps'], iphone)).toEqual({
      ok: true,
      argv: ['xcrun', 'devicectl', 'device', 'info', 'apps', '--device', IPHONE],
    });
    expect(
      driver.execArgv(
        'devicectl',
        ['device', 'process', 'launch', '--terminate-existing', 'com.example.app'],
        iphone,
      ),
    ).toEqual({
      ok: true,
      argv: [
        'xcrun',
        'devicectl',
        'device',
        'process',
        'launch',
        '--device',
        IPHONE,
        '--terminate-existing',
        'com.example.app',
      ],
    });
  });

  it('refuses a --device of the caller, and commands that list or pair other devices', () => {
    expect(
      driver.execArgv('devicectl', ['device', 'info', 'apps', '--device', 'other'], iphone),
    ).toMatchObject({ ok: false, code: 'TOOL_NOT_ALLOWED' });
    expect(driver.execArgv('devicectl', ['list', 'devices'], iphone)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(driver.execArgv('devicectl', ['manage', 'unpair'], iphone)).toMatchObject({
      ok: false,
    });
  });

  it('lets an app argument after -- say --device', () => {
    const plan = driver.execArgv(
      'devicectl',
      ['device', 'process', 'launch', 'com.example.app', '--', '--device', 'x'],
      iphone,
    );
    expect(plan.ok).toBe(true);
  });

  it('refuses devicectl on a simulator and simctl or adb on a phone', () => {
    expect(
      driver.execArgv('devicectl', ['device', 'info', 'apps'], { ...iphone, physical: false }),
    ).toMatchObject({ ok: false, code: 'TOOL_NOT_ALLOWED' });
    expect(driver.execArgv('simctl', ['launch', 'x'], iphone)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(driver.execArgv('adb', ['shell'], iphone)).toMatchObject({ ok: false });
  });
});
