import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fake-clock.js';
import {
  aPhone,
  aScriptedEmulator,
  aScriptedPhone,
  aScriptedSimulator,
  anEmulator,
} from '../../../test/fixtures/driver-devices.js';
import type { DriverDevice } from '../driver.js';
import { FakeDriver } from './fake.js';
import { FAKE_SCREENSHOT_PNG } from './fake-screenshot.js';
import { execStream } from '../../exec.js';
import type { FakeScriptInput } from './fake-script.js';

const run = promisify(execFile);
const UDID = '00008110-001A2B3C4D5E';

const script: FakeScriptInput = {
  bootMs: 5000,
  devices: [
    aScriptedSimulator('sim-1'),
    aScriptedSimulator('sim-2', { booted: true }),
    aScriptedSimulator('sim-broken'),
    aScriptedPhone(UDID, {
      name: 'QA iPhone',
      presenceTimeline: [
        { atMs: 10_000, present: false, reason: 'not-present' },
        { atMs: 20_000, present: true },
      ],
    }),
    aScriptedEmulator('emulator-5554'),
  ],
  runtimes: [{ platform: 'ios', version: '17.5' }],
  failures: { boot: ['sim-broken'], unhealthyWindows: [{ fromMs: 30_000, toMs: 40_000 }] },
  tools: { adb: { exitCode: 3, stderr: 'adb: scripted failure\n' } },
};

async function deviceById(driver: FakeDriver, id: string): Promise<DriverDevice> {
  const device = (await driver.listDevices()).devices.find((candidate) => candidate.id === id);
  if (device === undefined) throw new Error(`no ${id}`);
  return device;
}

describe('the fake driver', () => {
  let clock: FakeClock;
  let driver: FakeDriver;

  beforeEach(() => {
    clock = new FakeClock();
    driver = new FakeDriver(script, { clock });
  });

  it('lists scripted devices, with a catalog from the script and from its virtual devices', async () => {
    const listing = await driver.listDevices();
    expect(listing.devices.map((device) => [device.id, device.power])).toEqual([
      ['sim-1', 'shutdown'],
      ['sim-2', 'booted'],
      ['sim-broken', 'shutdown'],
      [UDID, 'booted'],
      ['emulator-5554', 'shutdown'],
    ]);
    expect(listing.catalog.platforms).toEqual(['ios', 'android']);
    expect(listing.catalog.models).toEqual([
      { name: 'iPhone 16', platform: 'ios', class: 'phone' },
      { name: 'Pixel 7', platform: 'android', class: 'phone' },
    ]);
    expect(listing.catalog.runtimes).toEqual([
      { platform: 'ios', version: '17.5' },
      { platform: 'ios', version: '18.4' },
      { platform: 'android', version: '34' },
    ]);
  });

  it('boots in the scripted time on the injected clock', async () => {
    const booting = driver.boot(await deviceById(driver, 'sim-1'));
    await clock.advance(4999);
    expect((await deviceById(driver, 'sim-1')).power).toBe('transitioning');
    await clock.advance(1);
    await booting;
    expect((await deviceById(driver, 'sim-1')).power).toBe('booted');
  });

  it('fails a boot the script says fails', async () => {
    const booting = driver.boot(await deviceById(driver, 'sim-broken'));
    const failed = expect(booting).rejects.toThrow(/scripted/);
    await clock.advance(5000);
    await failed;
    expect((await deviceById(driver, 'sim-broken')).power).toBe('shutdown');
  });

  it('follows the presence timeline, and a presence set by hand', async () => {
    const phone = await deviceById(driver, UDID);
    expect(await driver.readPresence(phone)).toEqual({ present: true });
    await clock.advance(10_000);
    expect(await driver.readPresence(phone)).toEqual({ present: false, reason: 'not-present' });
    await clock.advance(10_000);
    expect(await driver.readPresence(phone)).toEqual({ present: true });
    driver.setPresence(UDID, { present: false, reason: 'locked' });
    expect(await driver.readPresence(phone)).toEqual({ present: false, reason: 'locked' });
  });

  it('is unhealthy inside a scripted window and when told', async () => {
    await expect(driver.checkHealth()).resolves.toBeUndefined();
    await clock.advance(30_000);
    await expect(driver.checkHealth()).rejects.toThrow(/health/);
    await clock.advance(10_000);
    await expect(driver.checkHealth()).resolves.toBeUndefined();
    driver.setHealthy(false);
    await expect(driver.checkHealth()).rejects.toThrow();
  });

  it('adds and removes devices at run time', async () => {
    driver.addDevice(aScriptedEmulator('R58N', { model: 'Galaxy S23', physical: true }));
    driver.removeDevice('sim-1');
    const ids = (await driver.listDevices()).devices.map((device) => device.id);
    expect(ids).toContain('R58N');
    expect(ids).not.toContain('sim-1');
  });

  it('refuses a script with a bad field, naming it', () => {
    const badScript: unknown = { devices: [{ id: 'x', model: 'y', platform: 'windows', os: '1' }] };
    expect(() => new FakeDriver(badScript as FakeScriptInput)).toThrow(/devices\.0\.platform/);
  });
});

describe('the fake driver with a script file', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'simlock-fake-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('reads YAML, and picks up added and removed devices on reload, keeping running ones running', async () => {
    const path = join(directory, 'script.yaml');
    await writeFile(
      path,
      [
        'bootMs: 0',
        'devices:',
        '  - {id: sim-a, model: iPhone 16, platform: ios, os: "18.4", booted: true}',
        '  - {id: sim-b, model: iPhone 16, platform: ios, os: "18.4"}',
      ].join('\n'),
    );
    const driver = await FakeDriver.fromFile(path, { clock: new FakeClock() });
    await writeFile(
      path,
      [
        'devices:',
        '  - {id: sim-a, model: iPhone 16, platform: ios, os: "18.4"}',
        '  - {id: sim-c, model: iPhone 16, platform: ios, os: "18.4"}',
      ].join('\n'),
    );
    await driver.reload();
    const devices = (await driver.listDevices()).devices;
    expect(devices.map((device) => [device.id, device.power])).toEqual([
      ['sim-a', 'booted'],
      ['sim-c', 'shutdown'],
    ]);
  });
});

describe('fake exec', () => {
  const driver = new FakeDriver(script, { clock: new FakeClock() });
  const phone = aPhone(UDID);

  it('runs a real process that prints the devicectl argv aimed at the leased UDID', async () => {
    const plan = driver.execArgv('devicectl', ['device', 'info', 'apps'], phone);
    if (!plan.ok) throw new Error(plan.message);
    const [file, ...args] = plan.argv;
    const { stdout } = await run(file, args);
    expect(stdout).toBe(`fake-tool: devicectl device info apps --device ${UDID}\n`);
  });

  it('exits with the scripted code and stderr', async () => {
    const emulator = anEmulator('emulator-5554', { power: 'booted' });
    const plan = driver.execArgv('adb', ['shell', 'ls'], emulator);
    if (!plan.ok) throw new Error(plan.message);
    const [file, ...args] = plan.argv;
    const failure = await run(file, args).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 3,
      stdout: 'fake-tool: adb -s emulator-5554 shell ls\n',
      stderr: 'adb: scripted failure\n',
    });
  });

  it('answers a screenshot to stdout with a real PNG, byte for byte in base64 chunks', async () => {
    const simulator = { ...phone, id: 'sim-2', physical: false };
    const plan = driver.execArgv('simctl', ['io', 'screenshot', '-'], simulator);
    if (!plan.ok) throw new Error(plan.message);
    const chunks: Buffer[] = [];
    let stderr = '';
    for await (const event of execStream(plan.argv, { encoding: 'base64' })) {
      if (event.type === 'output' && event.stream === 'stdout')
        chunks.push(Buffer.from(event.data, 'base64'));
      if (event.type === 'output' && event.stream === 'stderr')
        stderr += Buffer.from(event.data, 'base64').toString('utf8');
    }
    expect(Buffer.concat(chunks).equals(FAKE_SCREENSHOT_PNG)).toBe(true);
    expect(FAKE_SCREENSHOT_PNG.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(stderr).toBe('fake-tool: simctl io sim-2 screenshot -\n');
  });

  it('prints a large output whole: stdout as many times as stdoutRepeat says', async () => {
    const chunk = `${'x'.repeat(65_535)}\n`;
    const large = new FakeDriver(
      { ...script, tools: { devicectl: { stdout: chunk, stdoutRepeat: 64 } } },
      { clock: new FakeClock() },
    );
    const plan = large.execArgv('devicectl', ['device', 'info', 'apps'], phone);
    if (!plan.ok) throw new Error(plan.message);
    let bytes = 0;
    let exitCode: number | undefined;
    for await (const event of execStream(plan.argv)) {
      if (event.type === 'output' && event.stream === 'stdout') bytes += event.data.length;
      if (event.type === 'exit') exitCode = event.exitCode;
    }
    const line = `fake-tool: devicectl device info apps --device ${UDID}\n`;
    expect(bytes).toBe(line.length + 64 * chunk.length);
    expect(exitCode).toBe(0);
  });

  it('refuses devicectl on a simulator and simctl on a phone, as the real drivers do', () => {
    expect(
      driver.execArgv('devicectl', ['device', 'info', 'apps'], { ...phone, physical: false }),
    ).toMatchObject({ ok: false, code: 'TOOL_NOT_ALLOWED' });
    expect(driver.execArgv('simctl', ['launch', 'x'], phone)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
  });
});
