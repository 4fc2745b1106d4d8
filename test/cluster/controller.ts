// The controller in-process, watching one TestFleet: its namespace (requests, leases, heartbeats)
// and its Workers (by label), as a test that plays or runs the agents needs it.
import { ControllerMetrics, Reconciler, type ReconcilerOptions } from '../../controller/index.js';
import { KubeClient, silentLogger, systemClock } from '../../runtime/index.js';
import type { TestFleet } from './fleet.js';
import type { ClusterTestContext } from './harness.js';

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
