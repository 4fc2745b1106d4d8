// Kueue: minimalkueue (Kueue's core controllers and scheduler, no webhooks) admitting N Workloads
// created directly in a LocalQueue of one ClusterQueue with quota for all of them. Its client is
// fixed at 50 requests/s, burst 100 (Kueue's defaults), so it is compared at the QPS 50 row. W has
// no counterpart here: a Workload is admitted against quota, not placed on a host.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Informer, type KubeObject } from '../../runtime/index.js';
import { createNamespace, inParallel, stopChild } from '../harness/index.js';
import {
  endOfSide,
  sideResult,
  startOfSide,
  type SideContext,
  type SideResult,
} from './measure.js';
import { startLogged, waitForProcess } from './nodes.js';
import { peerFolder } from './peers.js';

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

/** Kueue's CRDs, once per control plane (a second apply changes nothing). */
async function applyCrds(context: SideContext, folder: string): Promise<void> {
  const { controlPlane } = context.cluster;
  const run = promisify(execFile);
  const kubectl = join(controlPlane.binDir, 'kubectl');
  const kubeconfig = ['--kubeconfig', controlPlane.kubeconfigPath];
  await run(kubectl, [...kubeconfig, 'apply', '--server-side', '-f', join(folder, 'crds')], {
    maxBuffer: 1 << 22,
  });
  await run(kubectl, [
    ...kubeconfig,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '--all',
  ]);
}

export async function kueueSide(context: SideContext): Promise<SideResult> {
  const { admin, controlPlane } = context.cluster;
  const { size, tag, dir, options } = context;
  const folder = await peerFolder('kueue');
  await applyCrds(context, folder);
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
  const admitted = new Set<string>();
  const workloads = new Informer(admin, { path: `${KUEUE}/namespaces/${namespace}/workloads` });
  workloads.on((event) => {
    if (event.type !== 'deleted' && isAdmitted(event.object))
      admitted.add(event.object.metadata.name);
  });
  workloads.start();
  await workloads.waitForSync();
  const workloadsPath = `${KUEUE}/namespaces/${namespace}/workloads`;
  try {
    // Ready means it admits: one Workload first, outside the count.
    await admin.create(workloadsPath, workloadObject('warm-up', 'queue'));
    await waitForProcess(
      kueue,
      'minimalkueue',
      () => admitted.has('warm-up'),
      'admission',
      120_000,
    );
    admitted.clear();
    const start = await startOfSide(admin);
    const names = Array.from({ length: size.requests }, (_, index) => `workload-${index}`);
    await inParallel(names, options.concurrency, async (name) => {
      await admin.create(workloadsPath, workloadObject(name, 'queue'));
    });
    const end = await endOfSide(admin, start, {
      done: () => admitted.size >= size.requests,
      what: 'every workload admitted',
      timeoutMs: options.sideTimeoutMs,
      keep: (key) => key.includes('kueue.x-k8s.io/') || key.includes('events'),
      creates: { 'POST kueue.x-k8s.io/workloads': size.requests },
    });
    return sideResult(end, admitted.size, size.requests);
  } finally {
    await workloads.stop();
    // Its queues stay: each run has a control plane of its own.
    await stopChild(kueue, 'SIGTERM');
  }
}
