import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fake-clock.js';
import { CombinedDriver } from './combined.js';
import { createDriver } from './create.js';
import type { DoctorFinding } from './doctor-finding.js';
import type { Driver } from './driver.js';
import { FakeDriver } from './fake/fake.js';
import type { SimctlDriver } from './simctl/simctl.js';

const UDID = '00008110-001A2B3C4D5E';

function drivers() {
  const clock = new FakeClock();
  const simulators = new FakeDriver(
    { bootMs: 0, devices: [{ id: 'sim', model: 'iPhone 16', platform: 'ios', os: '18.4' }] },
    { clock },
  );
  const phones = new FakeDriver(
    {
      platforms: ['ios', 'android'],
      devices: [{ id: UDID, model: 'iPhone 15 Pro', platform: 'ios', os: '18.4', physical: true }],
    },
    { clock },
  );
  return { clock, simulators, phones, combined: new CombinedDriver([simulators, phones]) };
}

describe('several drivers as one', () => {
  it('merges the listings and the catalogs', async () => {
    const { combined } = drivers();
    const listing = await combined.listDevices();
    expect(listing.devices.map((device) => device.id)).toEqual(['sim', UDID]);
    expect(listing.catalog.platforms).toEqual(['ios', 'android']);
    expect(listing.catalog.models).toEqual([
      { name: 'iPhone 16', platform: 'ios', class: 'phone' },
    ]);
    expect(combined.platforms).toEqual(['ios', 'android']);
  });

  it('sends each operation to the driver that listed the device', async () => {
    const { combined, simulators, phones, clock } = drivers();
    const [sim, phone] = (await combined.listDevices()).devices;
    const booting = combined.boot(sim!);
    await clock.advance(0);
    await booting;
    await combined.reset(phone!, { apps: [] });
    expect(simulators.operations).toEqual([{ operation: 'boot', deviceId: 'sim' }]);
    expect(phones.operations).toEqual([{ operation: 'reset', deviceId: UDID }]);
  });

  it('makes a device with the driver that offers the model, which then owns it', async () => {
    const clock = new FakeClock();
    const phones = new FakeDriver(
      {
        platforms: ['ios'],
        devices: [
          { id: UDID, model: 'iPhone 15 Pro', platform: 'ios', os: '18.4', physical: true },
        ],
      },
      { clock },
    );
    const simulators = new FakeDriver(
      {
        bootMs: 0,
        provisionMs: 0,
        makeable: [{ platform: 'ios', model: 'iPhone 17', os: ['26.0'] }],
      },
      { clock },
    );
    const combined = new CombinedDriver([phones, simulators]);
    const listing = await combined.listDevices();
    expect(listing.makeable).toEqual([
      { platform: 'ios', model: 'iPhone 17', class: 'phone', os: ['26.0'] },
    ]);
    const making = combined.create(
      { platform: 'ios', model: 'iPhone 17', os: '26.0' },
      'simlock-x',
    );
    await clock.advance(0);
    const made = await making;
    await combined.delete(made);
    expect(simulators.operations.map((operation) => operation.operation)).toEqual([
      'create',
      'delete',
    ]);
    expect(phones.operations).toEqual([]);
    await expect(
      combined.create({ platform: 'android', model: 'Pixel 8', os: '34' }, 'simlock-y'),
    ).rejects.toThrow('no driver makes a android Pixel 8');
  });

  it('is unhealthy when any driver is, naming it', async () => {
    const { combined, phones } = drivers();
    phones.setHealthy(false);
    await expect(combined.checkHealth()).rejects.toThrow(/^fake: fake: health check fails/);
  });

  it('refuses exec on a device no driver listed, and a tool that does not fit first', async () => {
    const { combined } = drivers();
    const [, phone] = (await combined.listDevices()).devices;
    expect(combined.execArgv('simctl', ['launch', 'x'], phone!)).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(
      combined.execArgv('devicectl', ['device', 'info', 'apps'], { ...phone!, id: 'unknown' }),
    ).toMatchObject({
      ok: false,
      code: 'UNAVAILABLE',
    });
  });
});

describe('drivers from the config', () => {
  it('gives one driver as is, and several combined', async () => {
    const clock = new FakeClock();
    const dataDir = join(tmpdir(), 'simlock-agent-data');
    const one = await createDriver(
      { drivers: ['simctl'], bootTimeoutMs: 1000 },
      { clock, dataDir },
    );
    expect(one.kind).toBe('simctl');
    expect((one as SimctlDriver).deviceSetPath).toBe(join(dataDir, 'simctl-set'));
    const several = await createDriver(
      { drivers: ['simctl', 'devicectl', 'adb'], bootTimeoutMs: 1000 },
      { clock, dataDir },
    );
    expect(several.kind).toBe('combined');
    expect(several.platforms).toEqual(['ios', 'android']);
  });

  it('refuses the adb driver without a data directory, where its AVDs live', async () => {
    await expect(
      createDriver({ drivers: ['adb'], bootTimeoutMs: 1000 }, { clock: new FakeClock() }),
    ).rejects.toThrow(/adb driver needs the data directory/);
  });

  it('gives the simctl driver the data directory, and refuses to make it without one', async () => {
    const clock = new FakeClock();
    await expect(
      createDriver({ drivers: ['simctl'], bootTimeoutMs: 1000 }, { clock }),
    ).rejects.toThrow(/simctl driver needs the agent data directory/);
    const recorded = await createDriver(
      {
        drivers: ['simctl'],
        bootTimeoutMs: 1000,
        simctl: { deviceSet: 'default-recorded', adopt: [] },
        provision: { enabled: true, models: [], os: [] },
      },
      { clock, dataDir: join(tmpdir(), 'simlock-agent-data') },
    );
    expect((recorded as SimctlDriver).deviceSetPath).toBeUndefined();
  });
});

describe('the doctor through several drivers', () => {
  /** A driver that reports `findings` about its own place and records what it is asked to repair. */
  function placeDriver(kind: string, findings: DoctorFinding[]) {
    const repaired: DoctorFinding[] = [];
    const unused = () => Promise.reject(new Error('not in this test'));
    const driver: Driver = {
      kind,
      platforms: ['ios'],
      listDevices: unused,
      boot: unused,
      shutdown: unused,
      erase: unused,
      readResetBaseline: unused,
      reset: unused,
      readPresence: unused,
      checkHealth: unused,
      execArgv: () => ({ ok: false, code: 'UNAVAILABLE', message: 'not in this test' }),
      inspect: () =>
        Promise.resolve({ findings, tallies: [{ source: kind, what: 'taken in', count: 1 }] }),
      repair: (wanted) => {
        repaired.push(...wanted);
        return Promise.resolve(wanted.map((finding) => ({ finding, done: true, said: 'fixed' })));
      },
    };
    return { driver, repaired };
  }
  const finding = (source: string, subject: string): DoctorFinding => ({
    kind: `${source}.leftover`,
    source,
    subject,
    problem: 'a leftover',
    fix: 'delete it',
    severity: 'problem',
  });

  it('gathers every driver’s findings and sends each repair to the driver that found it', async () => {
    const simctl = placeDriver('simctl', [finding('simctl', 'A')]);
    const adb = placeDriver('adb', [finding('adb', 'B'), finding('adb', 'C')]);
    const { phones } = drivers(); // a driver without a place of its own: no inspect
    const combined = new CombinedDriver([simctl.driver, phones, adb.driver]);
    const inspection = await combined.inspect();
    expect(inspection.findings.map((f) => f.subject)).toEqual(['A', 'B', 'C']);
    expect(inspection.tallies.map((tally) => tally.source)).toEqual(['simctl', 'adb']);
    const repairs = await combined.repair(inspection.findings);
    expect(repairs.map((repair) => repair.finding.subject)).toEqual(['A', 'B', 'C']);
    expect(simctl.repaired.map((f) => f.subject)).toEqual(['A']);
    expect(adb.repaired.map((f) => f.subject)).toEqual(['B', 'C']);
  });
});
