// The device machine's shell: a device's life taken in from the listing and kept in the inventory,
// moves taken or refused by the table, and a taken move written back as the state the planner and
// the view see.
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../api/index.js';
import { silentLogger } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aSimulator } from '../test/fixtures/driver-devices.js';
import { DeviceSteps } from './device-steps.js';
import type { DriverDevice } from './drivers/driver.js';
import { Inventory } from './inventory.js';

const catalog: Catalog = { platforms: ['ios'], models: [], runtimes: [] };
const simulator = aSimulator('sim', { power: 'booted' });

function shellWith(...devices: DriverDevice[]) {
  const inventory = new Inventory(new FakeClock());
  const steps = new DeviceSteps({
    inventory,
    driver: { delete: () => Promise.resolve() },
    logger: silentLogger,
  });
  steps.takeListing({ catalog, devices });
  const stateOf = (id: string) =>
    inventory.devices(() => undefined).find((device) => device.id === id)?.state;
  return { inventory, steps, stateOf };
}

describe('the device machine shell', () => {
  it('takes each listed device in (owned when the agent made it); a phone is not the machine’s', () => {
    const { steps } = shellWith(
      simulator,
      { ...simulator, id: 'down', power: 'shutdown', deletable: true },
      { ...simulator, id: 'phone', physical: true },
    );
    expect(steps.lifeOf('sim')).toEqual({ kind: 'ready', owned: false });
    expect(steps.lifeOf('down')).toEqual({ kind: 'shutdown', owned: true });
    expect(steps.lifeOf('phone')).toBeUndefined();
  });

  it('loses the lease of a device the tools no longer list', () => {
    const { steps, stateOf } = shellWith(simulator);
    steps.answer('sim', { type: 'grantWarm', lease: 'ns/a' });
    const lost: unknown[] = [];
    steps.leaseLost.add((entry) => lost.push(entry));
    steps.takeListing({ catalog, devices: [] });
    expect(stateOf('sim')).toBeUndefined();
    expect(steps.lifeOf('sim')).toBeUndefined();
    expect(lost).toEqual([
      {
        lease: 'ns/a',
        effects: [
          { type: 'stopExecs', lease: 'ns/a' },
          { type: 'endLease', lease: 'ns/a', code: 'LEASE_LOST' },
        ],
      },
    ]);
  });

  it('refuses a stale answer: a device gone while its boot ran is not answered booted', () => {
    const { steps, stateOf } = shellWith({ ...simulator, power: 'shutdown' });
    steps.answer('sim', { type: 'grantCold', lease: 'ns/a' });
    expect(stateOf('sim')).toBe('booting');
    steps.takeListing({ catalog, devices: [] });
    expect(steps.answer('sim', { type: 'booted' })).toBeUndefined();
    expect(stateOf('sim')).toBeUndefined();
  });

  it('refuses an idle shutdown of a device a grant took first, and holds it when taken first', () => {
    const { steps, stateOf } = shellWith(simulator);
    const grant = steps.take('sim', { type: 'grantWarm', lease: 'ns/a' });
    if ('refused' in grant) throw new Error(grant.refused);
    steps.write('sim', grant.state);
    expect(stateOf('sim')).toBe('leased');
    expect(steps.take('sim', { type: 'idleShutdown' })).toEqual({
      refused: 'idleShutdown is not taken while leased',
    });

    const other = shellWith(simulator);
    const idle = other.steps.take('sim', { type: 'idleShutdown' });
    if ('refused' in idle) throw new Error(idle.refused);
    other.steps.write('sim', idle.state);
    expect(other.stateOf('sim')).toBe('reclaiming');
    expect('refused' in other.steps.take('sim', { type: 'grantWarm', lease: 'ns/a' })).toBe(true);
  });

  it('takes evictions all or none', () => {
    const { steps, stateOf } = shellWith(simulator, {
      ...simulator,
      id: 'down',
      power: 'shutdown',
    });
    expect(steps.takeAll(['sim', 'down'], { type: 'evict' })).toEqual({
      refused: 'evict is not taken while shutdown',
    });
    expect(stateOf('sim')).toBe('ready');
  });

  it('answers a failed shutdown with a quarantine that says why', () => {
    const { inventory, steps, stateOf } = shellWith(simulator);
    const idle = steps.take('sim', { type: 'idleShutdown' });
    if ('refused' in idle) throw new Error(idle.refused);
    steps.write('sim', idle.state);
    steps.answer('sim', { type: 'stopFailed' }, 'idle shutdown failed: stuck');
    expect(stateOf('sim')).toBe('quarantined');
    expect(inventory.quarantineOf('sim')?.reason).toBe('idle shutdown failed: stuck');
  });

  it('holds a slot for a device being made, then moves its life to the device made', () => {
    const { inventory, steps, stateOf } = shellWith();
    const making = steps.make('ns/a', {
      name: 'new iPhone 16',
      model: 'iPhone 16',
      platform: 'ios',
      os: '18.4',
      physical: false,
      class: 'phone',
    });
    expect(making).toMatchObject({
      id: 'making ns/a',
      step: {
        state: { kind: 'creating', owned: true, lease: 'ns/a' },
        effects: [{ type: 'make' }],
      },
    });
    expect(stateOf('making ns/a')).toBe('booting');
    // One placeholder per lease: a second make for it is refused.
    expect(steps.make('ns/a', { ...simulator, physical: false })).toEqual({
      refused: 'make is not taken while creating',
    });

    const made = { ...simulator, id: 'made', power: 'shutdown' as const, deletable: true };
    expect(steps.made('ns/a', made)).toEqual({ kind: 'booting', owned: true, lease: 'ns/a' });
    expect(inventory.devices(() => undefined).map((device) => [device.id, device.state])).toEqual([
      ['made', 'booting'],
    ]);
  });

  it('frees the slot of a device that could not be made', () => {
    const { inventory, steps } = shellWith();
    steps.make('ns/a', { ...simulator, physical: false });
    steps.makeFailed('ns/a');
    expect(inventory.devices(() => undefined)).toEqual([]);
    expect(steps.lifeOf('making ns/a')).toBeUndefined();
  });
});
