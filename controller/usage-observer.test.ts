// The usage observer on a clock moved by hand: a request's writes and deletion observed once each,
// whatever order they come in, and the device time a scrape brings up to now.
import { describe, expect, it } from 'vitest';
import type { Condition, Device } from '../api/index.js';
import { ManualClock } from '../runtime/index.js';
import { iosStatus, iphoneSimulator } from '../test/fixtures/workers.js';
import { ControllerMetrics } from './metrics.js';
import type { WorkerView } from '../api/index.js';
import { trackRequest, type TrackedRequest } from './tracked-request.js';
import { UsageObserver } from './usage-observer.js';

const workerView = (name: string, devices: Device[]): WorkerView => ({
  name,
  connection: 'connected',
  drained: false,
  status: iosStatus({ devices }),
});

function setup(devices = [iphoneSimulator('s1')]) {
  const clock = new ManualClock();
  const metrics = new ControllerMetrics();
  const views = new Map<string, WorkerView>([['w1', workerView('w1', devices)]]);
  const fleet = {
    current: () => ({ views: [...views.values()], viewRevisions: new Map<string, number>() }),
    view: (name: string) => views.get(name),
  };
  const usage = new UsageObserver(metrics, fleet, clock);
  // As the fleet cache tells the observer: the worker whose view changed.
  const setDevices = (next: Device[], worker = 'w1') => {
    views.set(worker, workerView(worker, next));
    usage.workerChanged(worker);
  };
  const sample = async (name: string, suffix = '') =>
    ((await metrics.registry.getSingleMetric(name)?.get())?.values ?? [])
      .filter((value) => ((value as { metricName?: string }).metricName ?? name) === name + suffix)
      .map((value) => ({ ...value.labels, value: value.value }));
  return { clock, metrics, usage, setDevices, sample };
}

function request(clock: ManualClock, overrides: Partial<TrackedRequest> = {}): TrackedRequest {
  const tracked = trackRequest({
    key: 'team-a/r1',
    namespace: 'team-a',
    name: 'r1',
    uid: 'u1',
    spec: { platform: 'ios', model: 'iphone 16' } as TrackedRequest['spec'],
    createdAt: clock.now(),
    seenAt: clock.now(),
    status: undefined,
  });
  return Object.assign(tracked, overrides);
}

const granted = (at: number): Condition => ({
  type: 'Granted',
  status: 'True',
  reason: 'Granted',
  message: '',
  lastTransitionTime: new Date(at).toISOString(),
});

describe('the usage observer', () => {
  it('observes a wait once, however many writes follow the grant, and the lease once at its deletion', async () => {
    const { clock, usage, sample } = setup();
    const r1 = request(clock);
    usage.statusWritten(r1, undefined, { phase: 'Pending' });
    usage.statusWritten(r1, { phase: 'Pending' }, { phase: 'Waiting' });
    clock.advance(90_000);
    r1.life = { kind: 'granted', worker: 'w1', leaseUid: 'u1', grantedAt: clock.now() };
    r1.device = { ...iphoneSimulator('s1'), class: 'phone' };
    const status = { phase: 'Granted', conditions: [granted(clock.now())] };
    usage.statusWritten(r1, { phase: 'Waiting' }, status);
    // Later writes of the granted request (its expiry, a retried write): no second wait.
    usage.statusWritten(r1, status, status);
    usage.statusWritten(r1, status, { phase: 'Granted', conditions: [] });
    expect(await sample('simlock_request_wait_seconds', '_sum')).toEqual([
      { platform: 'ios', model: 'iPhone 16', namespace: 'team-a', value: 90 },
    ]);
    clock.advance(300_000);
    usage.grantedRequestDeleting(r1);
    expect(await sample('simlock_lease_duration_seconds', '_count')).toEqual([
      { platform: 'ios', model: 'iPhone 16', reason: 'RequestDeleted', value: 1 },
    ]);
    expect(await sample('simlock_lease_duration_seconds', '_sum')).toEqual([
      { platform: 'ios', model: 'iPhone 16', reason: 'RequestDeleted', value: 300 },
    ]);
  });

  it('times a lease granted by an earlier process from the Granted condition it wrote', async () => {
    const { clock, usage, sample } = setup();
    const grantedAt = clock.now();
    clock.advance(60_000);
    // Found granted (a restart): no grant seen by this process.
    const life = { kind: 'granted', worker: 'w1', leaseUid: 'u1' } as const;
    const r1 = request(clock, { life, conditions: [granted(grantedAt)] });
    clock.advance(60_000);
    usage.grantedRequestDeleting(r1);
    expect(await sample('simlock_lease_duration_seconds', '_sum')).toEqual([
      { platform: 'ios', model: 'iPhone 16', reason: 'RequestDeleted', value: 120 },
    ]);
    expect(await sample('simlock_request_wait_seconds', '_count')).toEqual([]);
  });

  it('brings the device time up to each scrape and each change of the devices', async () => {
    const { clock, setDevices, sample } = setup();
    setDevices([iphoneSimulator('s1'), iphoneSimulator('s2')]);
    clock.advance(10_000);
    setDevices([iphoneSimulator('s1', { state: 'leased' }), iphoneSimulator('s2')]);
    clock.advance(30_000);
    // A scrape reads both counters: the second adds nothing more.
    expect(await sample('simlock_device_leased_seconds_total')).toEqual([
      { worker: 'w1', model: 'iPhone 16', value: 30 },
    ]);
    expect(await sample('simlock_device_available_seconds_total')).toEqual([
      { worker: 'w1', model: 'iPhone 16', value: 80 },
    ]);
  });

  it("adds a worker's time at its own changes, and every worker's at a scrape, none lost", async () => {
    const { clock, setDevices, sample } = setup([]);
    setDevices([iphoneSimulator('a1')], 'w1');
    setDevices([iphoneSimulator('b1')], 'w2');
    clock.advance(10_000);
    setDevices([iphoneSimulator('a1', { state: 'leased' })], 'w1');
    clock.advance(30_000);
    setDevices([iphoneSimulator('b1', { state: 'leased' })], 'w2');
    clock.advance(10_000);
    // w1: leased from 10 s to 50 s; w2: leased from 40 s; both available for 50 s.
    expect(await sample('simlock_device_leased_seconds_total')).toEqual([
      { worker: 'w1', model: 'iPhone 16', value: 40 },
      { worker: 'w2', model: 'iPhone 16', value: 10 },
    ]);
    expect(await sample('simlock_device_available_seconds_total')).toEqual([
      { worker: 'w1', model: 'iPhone 16', value: 50 },
      { worker: 'w2', model: 'iPhone 16', value: 50 },
    ]);
  });
});
