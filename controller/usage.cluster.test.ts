// The usage metrics against the real API server, with the test playing the agent: a request's wait
// is observed once at its grant, with the model as the fleet spells it; its lease once at its end;
// the device time of a worker's leased simulator; and a controller that takes over a granted
// request (a restart, a new leader) observes no second wait, only the lease's end, timed from the
// grant the status records.
import { describe, expect, it } from 'vitest';
import { simlockPath } from '../runtime/index.js';
import { controllerFor, controllerStories } from '../test/cluster/controller.js';
import { iosStatus } from '../test/cluster/fleet.js';
import { iphoneSimulator } from '../test/fixtures/workers.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { ControllerMetrics } from './metrics.js';

const cluster = useCluster('usage');
const { setup, metric } = controllerStories(cluster);

/** The series of a metric (suffix: `_count`, `_sum`) whose labels include `labels`. */
async function series(
  metrics: ControllerMetrics,
  name: string,
  suffix: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return values
    .filter(
      (value) => ((value as { metricName?: string }).metricName ?? name) === `${name}${suffix}`,
    )
    .filter((value) => Object.entries(labels).every(([k, v]) => value.labels[k] === v))
    .reduce((sum, value) => sum + value.value, 0);
}

describe('usage metrics', () => {
  it('observes the wait at the grant and the lease at its release, once each, and the device time', async () => {
    const { fleet, metrics, start } = await setup();
    const worker = await fleet.addWorker('a', {
      status: iosStatus({ devices: [iphoneSimulator('sim-1')] }),
    });
    await start();
    const created = Date.now();
    await fleet.createRequest('r1', { platform: 'ios', model: 'IPHONE 16' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    const granted = Date.now();
    const wait = { platform: 'ios', model: 'iPhone 16', namespace: fleet.namespace };
    const name = 'simlock_request_wait_seconds';
    await eventually(async () =>
      (await series(metrics, name, '_count', wait)) === 1 ? true : undefined,
    );
    // The creation time the API server records is in whole seconds.
    const seconds = await series(metrics, name, '_sum', wait);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan((granted - created) / 1000 + 1);

    // The agent says its simulator is leased: its time counts as leased and available.
    await fleet.patchStatus('a', { devices: [iphoneSimulator('sim-1', { state: 'leased' })] });
    const device = { worker, model: 'iPhone 16' };
    const leased = await eventually(async () => {
      const value = await series(metrics, 'simlock_device_leased_seconds_total', '', device);
      return value >= 0.5 ? value : undefined;
    });
    const available = await series(metrics, 'simlock_device_available_seconds_total', '', device);
    // Read after: at least as much, more by the time it was available and free before the lease.
    expect(available).toBeGreaterThan(leased);

    await fleet.admin.delete(
      simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
    );
    await fleet.requestGone('r1');
    const lease = { platform: 'ios', model: 'iPhone 16', reason: 'RequestDeleted' };
    const duration = 'simlock_lease_duration_seconds';
    expect(await series(metrics, duration, '_count', lease)).toBe(1);
    expect(await series(metrics, duration, '_sum', lease)).toBeLessThan(
      (Date.now() - granted) / 1000 + 1,
    );
    // Once each: nothing more came of the writes and events after them.
    expect(await metric(metrics, 'simlock_grants_total')).toBe(1);
    expect(await series(metrics, name, '_count')).toBe(1);
  });

  it('a controller that takes over a granted request observes no second wait, only its end', async () => {
    const { fleet, reconciler, metrics, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus({ devices: [iphoneSimulator('sim-1')] }) });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.grant('r1');
    const granted = await fleet.phase('r1', 'Granted');
    // RequestView leaves out the transition times; the object has them.
    const conditions = granted.status?.conditions as
      { type: string; lastTransitionTime?: string }[] | undefined;
    const grantedAt = Date.parse(
      conditions?.find((c) => c.type === 'Granted')?.lastTransitionTime ?? '',
    );
    const wait = { platform: 'ios', model: 'any', namespace: fleet.namespace };
    await eventually(async () =>
      (await series(metrics, 'simlock_request_wait_seconds', '_count', wait)) === 1
        ? true
        : undefined,
    );
    await reconciler.stop();
    // Some time held before the successor starts: the lease's duration must include it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const successorStarted = Date.now();

    const after = new ControllerMetrics();
    const successor = controllerFor(cluster, fleet, { metrics: after });
    try {
      await successor.start();
      await eventually(() => (successor.ready ? true : undefined));
      await fleet.admin.delete(
        simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
      );
      await fleet.requestGone('r1');
      const lease = { platform: 'ios', model: 'iPhone 16', reason: 'RequestDeleted' };
      expect(await series(after, 'simlock_lease_duration_seconds', '_count', lease)).toBe(1);
      // Timed from the grant the status records, not from the successor's start.
      const seconds = await series(after, 'simlock_lease_duration_seconds', '_sum', lease);
      expect(seconds).toBeGreaterThanOrEqual((successorStarted - grantedAt) / 1000);
      expect(seconds).toBeLessThanOrEqual((Date.now() - grantedAt) / 1000);
      expect(await series(after, 'simlock_request_wait_seconds', '_count')).toBe(0);
    } finally {
      await successor.stop();
    }
  });
});
