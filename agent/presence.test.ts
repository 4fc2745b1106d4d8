import { describe, expect, it } from 'vitest';
import type { Presence } from '../api/index.js';
import { silentLogger } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aPhone, aScriptedPhone, aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { Limits } from './config.js';
import { DeviceSteps } from './device-steps.js';
import { FakeDriver } from './drivers/fake/fake.js';
import { Inventory } from './inventory.js';
import { PresenceWatcher, type PresenceChange } from './presence.js';
import { buildWorkerStatus } from './view.js';

const UDID = '00008110-001A2B3C4D5E';
const PROBE_MS = 10_000;

const phone = aPhone(UDID);

describe('the presence watcher with the fake driver', () => {
  async function setUp() {
    const clock = new FakeClock();
    const driver = new FakeDriver(
      {
        devices: [
          aScriptedPhone(UDID, { presence: { present: false, reason: 'not-present' } }),
          aScriptedSimulator('sim', { booted: true }),
        ],
      },
      { clock },
    );
    const inventory = new Inventory(clock);
    await new DeviceSteps({ inventory, driver, logger: silentLogger }).refresh(driver);
    const reads: string[] = [];
    const watcher = new PresenceWatcher({
      clock,
      probeIntervalMs: PROBE_MS,
      readPresence: (device) => {
        reads.push(device.id);
        return driver.readPresence(device);
      },
      physicalDevices: () => inventory.physicalDevices(),
    });
    const viewPresence = () =>
      buildWorkerStatus({
        health: 'running',
        capabilities: [],
        catalog: inventory.catalog,
        devices: inventory.devices((id) => watcher.latest(id)),
        limits: Limits.parse({}),
        queue: { entries: [], queueDepth: 0, physicalQueueDepth: 0 },
      }).devices.find((device) => device.id === UDID)?.presence;
    return { clock, driver, watcher, reads, viewPresence };
  }

  it('reads every physical device at start, and only physical ones', async () => {
    const { clock, watcher, reads, viewPresence } = await setUp();
    expect(viewPresence()).toBeUndefined(); // no read yet: no presence in the view
    watcher.start();
    await clock.advance(0);
    expect(reads).toEqual([UDID]);
    expect(viewPresence()).toEqual({ present: false, reason: 'not-present' });
    watcher.stop();
  });

  it('shows a device reported present again as present in the view within one probe interval', async () => {
    const { clock, driver, watcher, viewPresence } = await setUp();
    watcher.start();
    await clock.advance(3_000);
    driver.setPresence(UDID, { present: true }); // plugged back in, mid-interval
    expect(viewPresence()).toEqual({ present: false, reason: 'not-present' });
    await clock.advance(PROBE_MS);
    expect(viewPresence()).toEqual({ present: true });
    watcher.stop();
  });

  it('stops reading when stopped', async () => {
    const { clock, watcher, reads } = await setUp();
    watcher.start();
    await clock.advance(0);
    watcher.stop();
    await clock.advance(PROBE_MS * 3);
    expect(reads).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('presence reads', () => {
  it('keep the last read when a read fails', async () => {
    let answer: () => Promise<Presence> = () => Promise.resolve({ present: true });
    const watcher = new PresenceWatcher({
      clock: new FakeClock(),
      probeIntervalMs: PROBE_MS,
      readPresence: () => answer(),
      physicalDevices: () => [phone],
    });
    expect(await watcher.read(phone)).toEqual({ present: true });
    answer = () => Promise.reject(new Error('devicectl: CoreDevice service unavailable'));
    expect(await watcher.read(phone)).toBeUndefined();
    expect(watcher.latest(UDID)).toEqual({ present: true });
  });

  it('tell listeners only when a device presence changes', async () => {
    let presence: Presence = { present: true };
    const watcher = new PresenceWatcher({
      clock: new FakeClock(),
      probeIntervalMs: PROBE_MS,
      readPresence: () => Promise.resolve(presence),
      physicalDevices: () => [phone],
    });
    const changes: PresenceChange[] = [];
    watcher.changes.add((change) => changes.push(change));
    await watcher.read(phone);
    await watcher.read(phone);
    presence = { present: false, reason: 'untrusted' };
    await watcher.read(phone);
    expect(changes).toEqual([
      { deviceId: UDID, presence: { present: true } },
      { deviceId: UDID, presence: { present: false, reason: 'untrusted' } },
    ]);
  });

  it('never overlap: a round slower than the interval is followed by one more, not run beside it', async () => {
    const clock = new FakeClock();
    let inFlight = 0;
    let maxInFlight = 0;
    let calls = 0;
    const pending: (() => void)[] = [];
    const watcher = new PresenceWatcher({
      clock,
      probeIntervalMs: PROBE_MS,
      readPresence: () => {
        calls++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return new Promise<Presence>((resolve) =>
          pending.push(() => {
            inFlight--;
            resolve({ present: true });
          }),
        );
      },
      physicalDevices: () => [phone],
    });
    watcher.start();
    await clock.advance(PROBE_MS * 2.5);
    expect(calls).toBe(1);
    pending.shift()?.();
    await clock.advance(0);
    expect(calls).toBe(2);
    expect(maxInFlight).toBe(1);
    pending.shift()?.();
    watcher.stop();
    await watcher.idle();
  });
});
