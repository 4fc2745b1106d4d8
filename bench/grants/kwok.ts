// KWOK: kube-scheduler binds N pods onto W Nodes that kwok plays the kubelets of, and kwok takes
// each pod to Running (Pending → bound → Running, acknowledged by a fake node agent), as the
// controller and the fake agents take a request to Granted. Only kwok's "fast" Stages, with pod
// play parallelism raised and no node Leases (so no heartbeats); kwok's client is unthrottled, as
// the agents' are (kubelets are not throttled by the scheduler's limit either).
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNamespace, inParallel, stopChild } from '../harness/index.js';
import {
  endOfSide,
  sideResult,
  startOfSide,
  type SideContext,
  type SideResult,
} from './measure.js';
import {
  PodWatch,
  createNodes,
  deleteNodes,
  podObject,
  startLogged,
  startScheduler,
  waitForProcess,
} from './nodes.js';
import { peerFolder } from './peers.js';

const NODE_ANNOTATION = 'kwok.x-k8s.io/node';
/** kwok's default is 4; a pod is one status write, so as many in flight as the creates. */
export const POD_PLAY_PARALLELISM = 32;

/** kwok's configuration and its fast Stages (node-initialize, pod-ready, -complete, -delete). */
async function kwokConfig(folder: string, path: string): Promise<void> {
  const stagesDir = join(folder, 'stages');
  const stages = await Promise.all(
    (await readdir(stagesDir))
      .filter((name) => name.endsWith('.yaml'))
      .sort()
      .map((name) => readFile(join(stagesDir, name), 'utf8')),
  );
  const configuration = [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokConfiguration',
    'options:',
    `  podPlayStageParallelism: ${POD_PLAY_PARALLELISM}`,
    '  nodePlayStageParallelism: 4',
  ].join('\n');
  await writeFile(path, [configuration, ...stages].join('\n---\n'));
}

export async function kwokSide(context: SideContext): Promise<SideResult> {
  const { admin, controlPlane } = context.cluster;
  const { size, tag, dir, options } = context;
  const folder = await peerFolder('kwok');
  const configPath = join(dir, `kwok-${tag}.yaml`);
  await kwokConfig(folder, configPath);
  const namespace = `kwok-${tag}`;
  await createNamespace(admin, namespace);
  const nodes = await createNodes(context, { [NODE_ANNOTATION]: tag });
  const kwok = startLogged(
    join(folder, 'bin', 'kwok'),
    [
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      `--config=${configPath}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${NODE_ANNOTATION}=${tag}`,
      '--node-lease-duration-seconds=0',
      '--cidr=127.64.0.1/10',
      '--node-ip=127.0.0.1',
    ],
    join(dir, `kwok-${tag}.log`),
  );
  const scheduler = startScheduler(context, 'kube-scheduler-kwok');
  const pods = new PodWatch(admin, namespace);
  await pods.start();
  try {
    // Ready means both work: one pod to Running first, outside the count.
    await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject('warm-up'));
    await waitForProcess(
      kwok,
      'kwok',
      () => {
        if (scheduler.exitCode !== null) throw new Error('kube-scheduler exited; see its log');
        return pods.running.has('warm-up');
      },
      'pod Running',
    );
    pods.clear();
    const start = await startOfSide(admin);
    const names = Array.from({ length: size.requests }, (_, index) => `pod-${index}`);
    await inParallel(names, options.concurrency, async (name) => {
      await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject(name));
    });
    const end = await endOfSide(admin, start, {
      done: () => pods.running.size >= size.requests,
      what: 'every pod Running',
      timeoutMs: options.sideTimeoutMs,
      keep: (key) => key.includes('pods') || key.includes('events'),
      creates: { 'POST pods': size.requests },
    });
    return sideResult(end, pods.running.size, size.requests);
  } finally {
    await pods.stop();
    await stopChild(scheduler, 'SIGTERM');
    await stopChild(kwok, 'SIGTERM');
    await deleteNodes(admin, nodes);
  }
}
