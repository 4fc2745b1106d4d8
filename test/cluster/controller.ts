// The controller in-process, watching one TestFleet: its namespace (requests, leases, heartbeats)
// and its Workers (by label), as a test that plays or runs the agents needs it.
import { takesRequests } from '../../api/index.js';
import { ControllerMetrics, Reconciler, type ReconcilerOptions } from '../../controller/index.js';
import { KubeClient, silentLogger, systemClock } from '../../runtime/index.js';
import { afterEach } from 'vitest';
import { TestFleet } from './fleet.js';
import { eventually, type ClusterTestContext } from './harness.js';

/** A Reconciler for `fleet`, not started yet; `options` override the defaults. */
export function controllerFor(
  cluster: Pick<ClusterTestContext, 'kubeconfigPath'>,
  fleet: TestFleet,
  options: Partial<ReconcilerOptions> = {},
): Reconciler {
  return new Reconciler({
    client: KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath }),
    clock: systemClock(),
    log: silentLogger,
    metrics: new ControllerMetrics(),
    systemNamespace: fleet.namespace,
    watchNamespace: fleet.namespace,
    workerSelector: fleet.selector,
    reasonWriteIntervalMs: 100,
    ...options,
  });
}

/**
 * For a test file of controller stories: `setup()` gives a fresh fleet and a controller for it
 * (started by `start()`), both stopped and cleaned up after each test; `metric()` sums a metric.
 */
export function controllerStories(cluster: ClusterTestContext) {
  const running: Reconciler[] = [];
  const fleets: TestFleet[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
    await Promise.all(fleets.splice(0).map((fleet) => fleet.cleanup()));
  });
  return {
    setup: async (
      options: {
        dispatchTimeoutMs?: number;
        reasonWriteIntervalMs?: number;
        dispatchEventHoldMs?: number;
        grantEventsPerSecond?: number;
        expiringSoonMs?: number;
        apiContact?: ReconcilerOptions['apiContact'];
      } = {},
    ) => {
      const fleet = await TestFleet.create(cluster);
      fleets.push(fleet);
      const metrics = new ControllerMetrics();
      const reconciler = controllerFor(cluster, fleet, { metrics, ...options });
      running.push(reconciler);
      return { fleet, reconciler, metrics, start: () => reconciler.start() };
    },
    metric: async (metrics: ControllerMetrics, name: string): Promise<number> => {
      const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
      return values.reduce((sum, value) => sum + value.value, 0);
    },
  };
}

/**
 * Waits until the controller has made every status write it decided on (none coalesced, queued or
 * in flight): what a walk wrote is then counted, and what it did not write never will be.
 */
export async function writesSettled(reconciler: Reconciler): Promise<void> {
  await eventually(() => (reconciler.snapshot().pendingWrites === 0 ? true : undefined), {
    intervalMs: 20,
    what: "the controller's status writes made",
  });
}

/**
 * Waits until the controller sees worker `name` take requests (connected, undrained, its catalog
 * and capacity read). A request created before that fails on admission (NO_CAPACITY, no-worker),
 * as the product means it to: an agent's own report of running is not the controller's view of it.
 */
export async function takingRequests(reconciler: Reconciler, name: string): Promise<void> {
  const takes = () =>
    reconciler
      .snapshot()
      .workers.some(
        (view) =>
          view.name === name &&
          takesRequests.check(view, { platform: 'ios', physical: false }) === undefined,
      );
  await eventually(() => (takes() ? true : undefined), {
    what: `the controller seeing ${name} take requests`,
  });
}
