import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommandRunner } from '../command.js';
import type { DriverDevice } from '../driver.js';
import { readTestdata, StandIns } from '../testing/stand-in.js';
import { parseSimctlList, SimctlDriver } from './simctl.js';

const LIST_ARGV = ['simctl', 'list', '-j', 'devices', 'runtimes', 'devicetypes'];
const IPHONE_16_BOOTED = '0F6C7B1E-3C2A-4D8E-9B1F-6A5E4D3C2B10';
const IPHONE_16_SHUTDOWN = '7D3E2F10-1A2B-4C3D-8E9F-0A1B2C3D4E5F';

const simulator: DriverDevice = {
  id: IPHONE_16_SHUTDOWN,
  name: 'iPhone 16 (2)',
  model: 'iPhone 16',
  platform: 'ios',
  os: '18.4',
  physical: false,
  class: 'phone',
  power: 'shutdown',
};

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
describe('the simctl driver against a stand-in xcrun', { timeout: 30_000 }, () => {
  let standIns: StandIns;
  let driver: SimctlDriver;

  beforeEach(async () => {
    const listing = await readTestdata(import.meta.url, 'list-devices-runtimes-devicetypes.json');
    standIns = await StandIns.create({
      xcrun: [
        { argv: LIST_ARGV, stdout: listing },
        { argv: ['simctl', 'list', '-j', 'runtimes'], stdout: '{"runtimes": []}' },
        { argv: ['simctl', 'bootstatus', IPHONE_16_SHUTDOWN, '-b'], stdout: 'Device booted\n' },
        {
          argv: ['simctl', 'shutdown', IPHONE_16_SHUTDOWN],
          exitCode: 149,
          stderr:
            'An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to shutdown device in current state: Shutdown\n',
        },
        { argv: ['simctl', 'erase', IPHONE_16_SHUTDOWN] },
        {
          argv: ['simctl', 'shutdown', IPHONE_16_BOOTED],
          exitCode: 1,
          stderr: 'CoreSimulatorService connection interrupted\n',
        },
      ],
    });
    driver = new SimctlDriver({ run: createCommandRunner({ env: standIns.env }) });
  });

  afterEach(async () => {
    await standIns.cleanup();
  });

  it('lists devices with one simctl call', async () => {
    const listing = await driver.listDevices();
    expect(listing.devices).toHaveLength(5);
    expect(await standIns.calls('xcrun')).toEqual([LIST_ARGV]);
  });

  it('boots by UDID and waits with bootstatus', async () => {
    await driver.boot(simulator);
    expect(await standIns.calls('xcrun')).toEqual([
      ['simctl', 'bootstatus', IPHONE_16_SHUTDOWN, '-b'],
    ]);
  });

  it('treats shutting down a simulator that is already down as done, then erases it', async () => {
    await driver.erase(simulator);
    expect(await standIns.calls('xcrun')).toEqual([
      ['simctl', 'shutdown', IPHONE_16_SHUTDOWN],
      ['simctl', 'erase', IPHONE_16_SHUTDOWN],
    ]);
  });

  it('reports a failed shutdown with the tool stderr', async () => {
    await expect(driver.shutdown({ ...simulator, id: IPHONE_16_BOOTED })).rejects.toThrow(
      /connection interrupted/,
    );
  });

  it('is healthy while simctl answers, and unhealthy when xcrun is missing', async () => {
    await expect(driver.checkHealth()).resolves.toBeUndefined();
    const missing = new SimctlDriver({
      run: createCommandRunner({ env: { PATH: standIns.dir + '/nowhere' } }),
    });
    await expect(missing.checkHealth()).rejects.toThrow(/not found on PATH/);
  });

  it('has no physical devices to read or reset', async () => {
    await expect(driver.readPresence(simulator)).rejects.toThrow(/no physical device/);
  });
});

describe('simctl exec argv', () => {
  it('inserts the leased UDID right after the subcommand', () => {
    expect(driver().execArgv('simctl', ['launch', 'com.example.app', '--flag'], simulator)).toEqual(
      {
        ok: true,
        argv: ['xcrun', 'simctl', 'launch', IPHONE_16_SHUTDOWN, 'com.example.app', '--flag'],
      },
    );
    expect(driver().execArgv('simctl', ['io', 'screenshot', 'shot.png'], simulator)).toEqual({
      ok: true,
      argv: ['xcrun', 'simctl', 'io', IPHONE_16_SHUTDOWN, 'screenshot', 'shot.png'],
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
    return new SimctlDriver({ run: () => Promise.reject(new Error('exec plans run nothing')) });
  }
});
