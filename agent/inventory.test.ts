import { describe, expect, it } from 'vitest';
import type { Catalog } from '../api/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aPhone, aSimulator } from '../test/fixtures/driver-devices.js';
import type { DeviceListing, DriverDevice } from './drivers/driver.js';
import { Inventory } from './inventory.js';

const catalog: Catalog = { platforms: ['ios'], models: [], runtimes: [] };
const simulator = aSimulator('sim');
const phone = aPhone('phone');

function listing(...devices: DriverDevice[]): DeviceListing {
  return { catalog, devices };
}

describe('the inventory', () => {
  it('derives states: a booted simulator is ready, a shut-down one free to boot, an unavailable one left out', () => {
    const inventory = new Inventory(new FakeClock());
    inventory.applyListing(
      listing(
        { ...simulator, id: 'up', power: 'booted' },
        simulator,
        { ...simulator, id: 'moving', power: 'transitioning' },
        { ...simulator, id: 'broken', power: 'unavailable' },
      ),
    );
    expect(inventory.devices(() => undefined).map((device) => [device.id, device.state])).toEqual([
      ['moving', 'booting'],
      ['sim', 'shutdown'],
      ['up', 'ready'],
    ]);
  });

  it('lets the agent state win over the listing', () => {
    const inventory = new Inventory(new FakeClock());
    inventory.applyListing(listing({ ...simulator, power: 'booted' }));
    inventory.hold('sim', 'leased');
    inventory.applyListing(listing({ ...simulator, power: 'booted' }));
    expect(inventory.devices(() => undefined)[0]?.state).toBe('leased');
    inventory.hold('sim', undefined);
    expect(inventory.devices(() => undefined)[0]?.state).toBe('ready');
  });

  it('shows a phone the driver no longer lists as absent, until it is forgotten', () => {
    const inventory = new Inventory(new FakeClock());
    inventory.applyListing(listing(phone));
    inventory.applyListing(listing());
    expect(inventory.devices(() => ({ present: false, reason: 'not-present' }))).toEqual([
      expect.objectContaining({
        id: 'phone',
        state: 'absent',
        presence: { present: false, reason: 'not-present' },
      }),
    ]);
    expect(inventory.physicalDevices().map((device) => device.id)).toEqual(['phone']);
    inventory.forget('phone');
    expect(inventory.devices(() => undefined)).toEqual([]);
  });

  it('keeps a power change the agent made over a listing that started before it', async () => {
    const inventory = new Inventory(new FakeClock());
    inventory.applyListing(listing(simulator));
    let answer: (value: DeviceListing) => void = () => undefined;
    const slowListing = inventory.refresh({
      listDevices: () => new Promise((resolve) => (answer = resolve)),
    });
    inventory.setPower('sim', 'booted'); // our boot finished while the listing ran
    answer(listing(simulator)); // the listing still says shut down
    await slowListing;
    expect(inventory.devices(() => undefined)[0]?.state).toBe('ready');
  });

  it('remembers since when a device is ready', async () => {
    const clock = new FakeClock();
    const inventory = new Inventory(clock);
    inventory.applyListing(listing({ ...simulator, power: 'booted' }));
    const since = inventory.devices(() => undefined)[0]?.readySinceMs;
    await clock.advance(5000);
    expect(inventory.devices(() => undefined)[0]?.readySinceMs).toBe(since);
  });

  it('gives presence to physical devices only', () => {
    const inventory = new Inventory(new FakeClock());
    inventory.applyListing(listing({ ...simulator, power: 'booted' }, phone));
    const devices = inventory.devices(() => ({ present: true }));
    expect(devices.find((device) => device.id === 'sim')?.presence).toBeUndefined();
    expect(devices.find((device) => device.id === 'phone')?.presence).toEqual({ present: true });
  });
});
