import { describe, expect, it } from 'vitest';
import { PROTOCOL, viewKey, type Catalog, type WorkerStatus } from '../api/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aPlannedPhone, aPlannedSimulator } from '../test/fixtures/driver-devices.js';
import { Limits } from './config.js';
import type { PlannedDevice } from './planner.js';
import {
  AGENT_VERSION,
  buildWorkerStatus,
  HealthTracker,
  ViewDiffer,
  type ViewChange,
  type ViewSources,
} from './view.js';

const catalog: Catalog = {
  platforms: ['ios'],
  models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
  runtimes: [{ platform: 'ios', version: '18.4' }],
};

const devices: PlannedDevice[] = [
  aPlannedSimulator('sim-warm', 'ready', { readySinceMs: 5 }),
  aPlannedSimulator('sim-off', 'shutdown', { name: 'iPhone 16 (2)' }),
  aPlannedPhone('00008110-001A2B3C4D5E', { presence: { present: false, reason: 'not-present' } }),
];

function sources(overrides: Partial<ViewSources> = {}): ViewSources {
  return {
    endpoint: 'https://mac-1.example:8780',
    health: 'running',
    capabilities: [{ name: 'camera', available: true }],
    catalog,
    devices,
    limits: Limits.parse({ running: 2, platforms: { ios: { running: 2, ramBudgetMb: 8192 } } }),
    queue: { entries: [], queueDepth: 0, physicalQueueDepth: 0 },
    ...overrides,
  };
}

describe('building the Worker status', () => {
  it('reports protocol, version, health, endpoint, catalog, capacity and the listed devices', () => {
    const status = buildWorkerStatus(sources());
    expect(status).toMatchObject({
      protocol: PROTOCOL.current,
      agentVersion: AGENT_VERSION,
      health: 'running',
      endpoint: 'https://mac-1.example:8780',
      capabilities: [{ name: 'camera', available: true }],
      catalog,
      capacity: {
        global: { limit: 2, running: 1, evictable: 1 },
        platforms: { ios: { limit: 2, running: 1, evictable: 1, atRamBudget: false } },
      },
      queueDepth: 0,
      physicalQueueDepth: 0,
      slots: '1/2',
      deviceCount: 2,
    });
  });

  it('lists running simulators and physical devices with presence, not shut-down simulators', () => {
    const status = buildWorkerStatus(sources());
    expect(status.devices).toEqual([
      {
        id: '00008110-001A2B3C4D5E',
        name: 'QA iPhone',
        model: 'iPhone 15 Pro',
        platform: 'ios',
        os: '18.4',
        physical: true,
        class: 'phone',
        state: 'ready',
        presence: { present: false, reason: 'not-present' },
      },
      {
        id: 'sim-warm',
        name: 'iPhone 16',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        physical: false,
        class: 'phone',
        state: 'ready',
      },
    ]);
  });

  it('shows a quarantined device with why and since when, and where the limits come from', () => {
    const quarantined: PlannedDevice = {
      ...devices[0]!,
      id: 'sim-broken',
      state: 'quarantined',
      quarantinedFor: { reason: 'boot failed: timed out', sinceMs: Date.UTC(2026, 11, 3, 20) },
    };
    const status = buildWorkerStatus(
      sources({ devices: [quarantined], limitsBasis: 'set in the agent config' }),
    );
    expect(status.devices).toMatchObject([
      {
        id: 'sim-broken',
        state: 'quarantined',
        quarantine: { reason: 'boot failed: timed out', since: '2026-12-03T20:00:00.000Z' },
      },
    ]);
    expect(status.limitsBasis).toBe('set in the agent config');
  });

  it('has no catalog and no capacity before the drivers are read', () => {
    const status = buildWorkerStatus(
      sources({ catalog: undefined, devices: [], health: 'starting' }),
    );
    expect(status.catalog).toBeUndefined();
    expect(status.capacity).toBeUndefined();
    expect(status.health).toBe('starting');
  });

  it('carries the local queue, bounded to 50 entries', () => {
    const entries = Array.from({ length: 60 }, (_, index) => ({
      id: `local-${index}`,
      platform: 'ios' as const,
      reason: 'busy' as const,
    }));
    const status = buildWorkerStatus(
      sources({ queue: { entries, queueDepth: 60, physicalQueueDepth: 0 } }),
    );
    expect(status.queue).toHaveLength(50);
    expect(status.queueDepth).toBe(60);
  });
});

describe('health', () => {
  it('goes starting → running → unhealthy → running with the checks', () => {
    const health = new HealthTracker();
    expect(health.health).toBe('starting');
    health.recordListing();
    expect(health.health).toBe('starting');
    health.recordCheck();
    expect(health.health).toBe('running');
    health.recordCheck('xcrun: not found on PATH');
    expect(health.health).toBe('unhealthy');
    expect(health.failure).toBe('xcrun: not found on PATH');
    health.recordCheck();
    expect(health.health).toBe('running');
    health.recordListing('adb devices exited 1');
    expect(health.health).toBe('unhealthy');
  });
});

describe('the view differ', () => {
  function differ(debounceMs = 1000) {
    const clock = new FakeClock();
    const view = new ViewDiffer({ clock, debounceMs });
    const emitted: ViewChange[] = [];
    view.changes.add((change) => emitted.push(change));
    return { clock, view, emitted };
  }

  it('emits a change at once when nothing was emitted within the debounce, with its view key', async () => {
    const { clock, view, emitted } = differ();
    const status = buildWorkerStatus(sources());
    view.offer(status);
    expect(emitted).toEqual([{ status, viewKey: viewKey(status) }]);
    await clock.advance(5000);
    const unplugged = buildWorkerStatus(sources({ health: 'unhealthy' }));
    view.offer(unplugged);
    expect(emitted.map((change) => change.status)).toEqual([status, unplugged]);
  });

  it('emits nothing when the view did not change, even rebuilt with another key order', async () => {
    const { clock, view, emitted } = differ();
    view.offer(buildWorkerStatus(sources()));
    await clock.advance(1000);
    view.offer(buildWorkerStatus(sources({ devices: [...devices].reverse() })));
    const reordered = Object.fromEntries(Object.entries(buildWorkerStatus(sources())).reverse());
    view.offer(reordered as WorkerStatus);
    await clock.advance(5000);
    expect(emitted).toHaveLength(1);
  });

  it('folds changes within the debounce of an emit into one emit of the latest view, at its end', async () => {
    const { clock, view, emitted } = differ();
    view.offer(buildWorkerStatus(sources()));
    await clock.advance(300);
    view.offer(buildWorkerStatus(sources({ health: 'unhealthy' })));
    await clock.advance(300);
    view.offer(
      buildWorkerStatus(
        sources({
          health: 'running',
          queue: { entries: [], queueDepth: 1, physicalQueueDepth: 0 },
        }),
      ),
    );
    await clock.advance(399);
    expect(emitted).toHaveLength(1);
    await clock.advance(1);
    expect(emitted).toHaveLength(2);
    expect(emitted[1]?.status).toMatchObject({ health: 'running', queueDepth: 1 });
  });

  it('emits nothing when a change is undone within the debounce', async () => {
    const { clock, view, emitted } = differ();
    view.offer(buildWorkerStatus(sources()));
    await clock.advance(100);
    view.offer(buildWorkerStatus(sources({ health: 'unhealthy' })));
    view.offer(buildWorkerStatus(sources()));
    await clock.advance(1000);
    expect(emitted).toHaveLength(1);
  });
});

describe('the view differ: devices taken (ADR 0029)', () => {
  const taken = (ids: string[]) =>
    buildWorkerStatus(
      sources({
        devices: devices.map((device) =>
          ids.includes(device.id) ? { ...device, state: 'leased' as const } : device,
        ),
      }),
    );

  function differ() {
    const clock = new FakeClock();
    const view = new ViewDiffer({ clock, debounceMs: 1000, takenDelayMs: 5000 });
    const emitted: WorkerStatus[] = [];
    view.changes.add((change) => emitted.push(change.status));
    view.offer(buildWorkerStatus(sources()));
    return { clock, view, emitted };
  }

  it('writes devices taken once, takenDelayMs after the first, with the takings that follow', async () => {
    const { clock, view, emitted } = differ();
    await clock.advance(10_000);
    view.offer(taken(['sim-warm']));
    await clock.advance(3000);
    const both = taken(['sim-warm', '00008110-001A2B3C4D5E']);
    view.offer(both);
    await clock.advance(1999);
    expect(emitted).toHaveLength(1);
    await clock.advance(1);
    expect(emitted).toEqual([expect.anything(), both]);
  });

  it('writes at once (as any change) when something else changes meanwhile', async () => {
    const { clock, view, emitted } = differ();
    await clock.advance(10_000);
    view.offer(taken(['sim-warm']));
    await clock.advance(2000);
    const unhealthy = buildWorkerStatus(
      sources({
        health: 'unhealthy',
        devices: devices.map((device) =>
          device.id === 'sim-warm' ? { ...device, state: 'leased' as const } : device,
        ),
      }),
    );
    view.offer(unhealthy);
    expect(emitted.at(-1)).toBe(unhealthy);
  });

  it('writes nothing for a device taken and given back within the wait', async () => {
    const { clock, view, emitted } = differ();
    await clock.advance(10_000);
    view.offer(taken(['sim-warm']));
    await clock.advance(1000);
    view.offer(buildWorkerStatus(sources()));
    await clock.advance(10_000);
    expect(emitted).toHaveLength(1);
  });

  it('prompt() ends the wait: written as any change (a local grant)', async () => {
    const { clock, view, emitted } = differ();
    await clock.advance(300);
    const local = taken(['sim-warm']);
    view.offer(local);
    view.prompt();
    // Still within the debounce of the first write: at its end, not 5 s on.
    await clock.advance(699);
    expect(emitted).toHaveLength(1);
    await clock.advance(1);
    expect(emitted.at(-1)).toBe(local);
  });
});
