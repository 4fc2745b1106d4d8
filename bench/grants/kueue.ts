// Kueue: minimalkueue (Kueue's core controllers and scheduler, no webhooks) admitting N Workloads
// created directly in a LocalQueue of one ClusterQueue with quota for all of them. Its client is
// fixed at 50 requests/s, burst 100 (Kueue's defaults), so it is compared at the QPS 50 row. W has
// no counterpart here: a Workload is admitted against quota, not placed on a host.
import { join } from 'node:path';
import { Informer, type KubeObject } from '../../runtime/index.js';
import { applyCrds, createNamespace, startLogged, stopChild } from '../harness/index.js';
import type { SideContext, SideResult } from './measure.js';
import { peerFolder } from './peers.js';
import { runSide } from './side.js';

const KUEUE = '/apis/kueue.x-k8s.io/v1beta2';

function workloadObject(name: string, localQueue: string) {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name },
    spec: {
      queueName: localQueue,
      podSets: [
        {
          name: 'main',
          count: 1,
          template: {
            spec: {
              restartPolicy: 'Never',
              containers: [
                {
                  name: 'main',
                  image: 'registry.k8s.io/pause:3.10',
                  resources: { requests: { cpu: '1' } },
                },
              ],
            },
          },
        },
      ],
    },
  };
}

function isAdmitted(object: KubeObject): boolean {
  const conditions = (object.status as { conditions?: { type?: string; status?: string }[] })
    ?.conditions;
  return (conditions ?? []).some(
    (condition) => condition.type === 'Admitted' && condition.status === 'True',
  );
}

export async function kueueSide(context: SideContext): Promise<SideResult> {
  const { admin, controlPlane } = context.cluster;
  const { size, tag, dir } = context;
  const folder = await peerFolder('kueue');
  // Once per control plane: a second apply changes nothing.
  await applyCrds(controlPlane, join(folder, 'crds'));
  const namespace = `workloads-${tag}`;
  await createNamespace(admin, namespace);
  const flavor = `flavor-${tag}`;
  const clusterQueue = `cq-${tag}`;
  await admin.create(`${KUEUE}/resourceflavors`, {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: flavor },
  });
  await admin.create(`${KUEUE}/clusterqueues`, {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ClusterQueue',
    metadata: { name: clusterQueue },
    spec: {
      namespaceSelector: {},
      queueingStrategy: 'BestEffortFIFO',
      resourceGroups: [
        {
          coveredResources: ['cpu'],
          flavors: [
            { name: flavor, resources: [{ name: 'cpu', nominalQuota: String(size.requests + 1) }] },
          ],
        },
      ],
    },
  });
  await admin.create(`${KUEUE}/namespaces/${namespace}/localqueues`, {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'LocalQueue',
    metadata: { name: 'queue' },
    spec: { clusterQueue },
  });
  const kueue = startLogged(
    join(folder, 'bin', 'minimalkueue'),
    [`--kubeconfig=${controlPlane.kubeconfigPath}`],
    join(dir, `minimalkueue-${tag}.log`),
    { ...process.env, KUBECONFIG: controlPlane.kubeconfigPath },
  );
  const workloadsPath = `${KUEUE}/namespaces/${namespace}/workloads`;
  const admitted = new Set<string>();
  const workloads = new Informer(admin, { path: workloadsPath });
  workloads.on((event) => {
    if (event.type !== 'deleted' && isAdmitted(event.object))
      admitted.add(event.object.metadata.name);
  });
  workloads.start();
  await workloads.waitForSync();
  return runSide(context, {
    item: 'workload',
    create: async (name) => {
      await admin.create(workloadsPath, workloadObject(name, 'queue'));
    },
    done: admitted,
    what: 'every workload admitted',
    // Ready means it admits.
    warmUp: { processes: { minimalkueue: kueue }, what: 'admission', timeoutMs: 120_000 },
    keep: (key) => key.includes('kueue.x-k8s.io/') || key.includes('events'),
    creates: ['POST kueue.x-k8s.io/workloads'],
    stop: async () => {
      await workloads.stop();
      // Its queues stay: each run has a control plane of its own.
      await stopChild(kueue, 'SIGTERM');
    },
  });
}
