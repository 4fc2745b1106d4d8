// The grant stages an agent wrote on each Lease of a namespace, read off a watch of the Leases
// (each status as the agent wrote it, where the request shows only the step of the moment: a step
// of 0.1 s may pass between two of the controller's writes).
import { LeaseObject, type GrantStage } from '../../api/index.js';
import { Informer, KubeClient, simlockPath } from '../../runtime/index.js';

export interface LeaseStages {
  /** The stages written on the Lease `name`, in the order first seen. */
  of(name: string): GrantStage[];
  stop(): Promise<void>;
}

export async function watchLeaseStages(
  kubeconfigPath: string,
  namespace: string,
): Promise<LeaseStages> {
  const stages = new Map<string, GrantStage[]>();
  const informer = new Informer(KubeClient.fromOptions({ kubeconfig: kubeconfigPath }), {
    path: simlockPath('lease', { namespace }),
  });
  informer.on((event) => {
    const lease = LeaseObject.safeParse(event.object);
    const stage = lease.success ? lease.data.status?.progress?.stage : undefined;
    if (stage === undefined || !lease.success) return;
    const name = lease.data.metadata.name;
    const seen = stages.get(name) ?? [];
    if (!seen.includes(stage)) stages.set(name, [...seen, stage]);
  });
  informer.start();
  await informer.waitForSync();
  return { of: (name) => stages.get(name) ?? [], stop: () => informer.stop() };
}
