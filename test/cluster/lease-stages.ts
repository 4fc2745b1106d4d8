// The grant stages an agent wrote on the Lease of each request of a namespace (the Leases are in
// their workers' namespaces: ADR 0034), read off a watch of the Leases
// (each status as the agent wrote it, where the request shows only the step of the moment: a step
// of 0.1 s may pass between two of the controller's writes).
import { LeaseObject, type GrantStage } from '../../api/index.js';
import { Informer, KubeClient } from '../../runtime/index.js';
import { leasesOfRequestsIn, requestNameOf } from './leases.js';

export interface LeaseStages {
  /** The stages written on the Lease of request `name`, in the order first seen. */
  of(name: string): GrantStage[];
  stop(): Promise<void>;
}

export async function watchLeaseStages(
  kubeconfigPath: string,
  namespace: string,
): Promise<LeaseStages> {
  const stages = new Map<string, GrantStage[]>();
  const informer = new Informer(
    KubeClient.fromOptions({ kubeconfig: kubeconfigPath }),
    leasesOfRequestsIn(namespace),
  );
  informer.on((event) => {
    const lease = LeaseObject.safeParse(event.object);
    const stage = lease.success ? lease.data.status?.progress?.stage : undefined;
    if (stage === undefined || !lease.success) return;
    const name = requestNameOf(lease.data);
    const seen = stages.get(name) ?? [];
    if (!seen.includes(stage)) stages.set(name, [...seen, stage]);
  });
  informer.start();
  await informer.waitForSync();
  return { of: (name) => stages.get(name) ?? [], stop: () => informer.stop() };
}
