// The inventory: each virtual device's state is its life in the device machine, taken in from the
// listing through the machine's shell; phones follow the listing and their own rules.
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../api/index.js';
import { silentLogger } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aPhone, aSimulator } from '../test/fixtures/driver-devices.js';
import { DeviceSteps } from './device-steps.js';
import type { DeviceListing, DriverDevice } from './drivers/driver.js';
import { Inventory } from './inventory.js';

const catalog: Catalog = { platforms: ['ios'], models: [], runtimes: [] };
const simulator = aSimulator('sim');
const phone = aPhone('phone');

function listing(...devices: DriverDevice[]): DeviceListing {
  return { catalog, devices };
}

function anInventory(clock = new FakeClock()) {
  const inventory = new Inventory(clock);
  const steps = new DeviceSteps({ inventory, driver: {}, logger: silentLogger });
  const states = () =>
    inventory.devices(() => undefined).map((device) => [device.id, device.state]);
  return { inventory, steps, states };
}

describe('the inventory', () => {
  it('derives states: a booted simulator is ready, a shut-down one free to boot, an unavailable one left out', () => {
    const { steps, states } = anInventory();
    steps.takeListing(
      listing(
        { ...simulator, id: 'up', power: 'booted' },
        simulator,
        { ...simulator, id: 'moving', power: 'transitioning' },
        { ...simulator, id: 'broken', power: 'unavailable' },
      ),
    );
    expect(states()).toEqual([
      ['moving', 'booting'],
      ['sim', 'shutdown'],
      ['up', 'ready'],
    ]);
  });

  it("shows the machine's state over what the listing says of a device the agent holds", () => {
    const { inventory, steps, states } = anInventory();
    steps.takeListing(listing({ ...simulator, power: 'booted' }));
    steps.answer('sim', { type: 'grantWarm', lease: 'ns/a' });
    steps.takeListing(listing({ ...simulator, power: 'transitioning' }));
    expect(states()).toEqual([['sim', 'leased']]);
    expect(inventory.lifeOf('sim')).toEqual({ kind: 'leased', owned: false, lease: 'ns/a' });
  });

  it('follows the power of a free device the agent did not change, and forgets one gone', () => {
    const { inventory, steps, states } = anInventory();
    steps.takeListing(listing({ ...simulator, power: 'booted' }));
    steps.takeListing(listing(simulator)); // shut down by someone else: listed [shut down]
    expect(states()).toEqual([['sim', 'shutdown']]);
    steps.takeListing(listing());
    expect(states()).toEqual([]);
    expect(inventory.lifeOf('sim')).toBeUndefined();
  });

  it("keeps a quarantine's why and since exactly while the machine says quarantined", async () => {
    const clock = new FakeClock();
    const { inventory, steps } = anInventory(clock);
    steps.takeListing(listing(simulator));
    steps.answer('sim', { type: 'grantCold', lease: 'ns/a' });
    const since = clock.now();
    steps.answer('sim', { type: 'bootFailed' }, 'boot failed: timed out');
    const shown = () => inventory.devices(() => undefined)[0];
    expect(shown()).toMatchObject({
      state: 'quarantined',
      quarantinedFor: { reason: 'boot failed: timed out', sinceMs: since, retries: 0 },
    });
    await clock.advance(1000);
    // A retry boots it: it takes a slot, and is still shown quarantined with why.
    steps.answer('sim', { type: 'quarantineRetry' });
    expect(shown()).toMatchObject({ state: 'booting', quarantinedFor: { sinceMs: since } });
    steps.answer('sim', { type: 'retryPassed' });
    expect(shown()?.quarantinedFor).toBeUndefined();
    expect(inventory.quarantines()).toEqual([]);
    // No quarantine is recorded for a device the machine does not say is quarantined.
    inventory.startQuarantine('sim', 'not so');
    expect(inventory.quarantineOf('sim')).toBeUndefined();
  });

  it('shows a phone the driver no longer lists as absent, until it is forgotten', () => {
    const { inventory, steps } = anInventory();
    steps.takeListing(listing(phone));
    steps.takeListing(listing());
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
    const { inventory, steps } = anInventory();
    steps.takeListing(listing(simulator));
    let answer: (value: DeviceListing) => void = () => undefined;
    const slowListing = steps.refresh({
      listDevices: () => new Promise((resolve) => (answer = resolve)),
    });
    steps.answer('sim', { type: 'grantCold', lease: 'ns/a' });
    inventory.setPower('sim', 'booted'); // our boot finished while the listing ran
    steps.answer('sim', { type: 'booted' });
    answer(listing(simulator)); // the listing still says shut down
    await slowListing;
    expect(inventory.driverDevice('sim')?.power).toBe('booted');
    expect(inventory.devices(() => undefined)[0]?.state).toBe('leased');
  });

  it('remembers since when a device is ready', async () => {
    const clock = new FakeClock();
    const { inventory, steps } = anInventory(clock);
    steps.takeListing(listing({ ...simulator, power: 'booted' }));
    const since = inventory.devices(() => undefined)[0]?.readySinceMs;
    await clock.advance(5000);
    expect(inventory.devices(() => undefined)[0]?.readySinceMs).toBe(since);
  });

  it('gives presence to physical devices only', () => {
    const { inventory, steps } = anInventory();
    steps.takeListing(listing({ ...simulator, power: 'booted' }, phone));
    const devices = inventory.devices(() => ({ present: true }));
    expect(devices.find((device) => device.id === 'sim')?.presence).toBeUndefined();
    expect(devices.find((device) => device.id === 'phone')?.presence).toEqual({ present: true });
  });
});
