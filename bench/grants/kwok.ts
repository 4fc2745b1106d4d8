// KWOK: kube-scheduler binds N pods onto W Nodes that kwok plays the kubelets of, and kwok takes
// each pod to Running (Pending → bound → Running, acknowledged by a fake node agent), as the
// controller and the fake agents take a request to Granted. Only kwok's "fast" Stages, with pod
// play parallelism raised and no node Leases (so no heartbeats); kwok's client is unthrottled, as
// the agents' are (kubelets are not throttled by the scheduler's limit either).
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startLogged, stopChild } from '../harness/index.js';
import type { SideContext, SideResult } from './measure.js';
import { startPodStage } from './pod-stage.js';
import { peerFolder } from './peers.js';
import { runSide } from './side.js';

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
  const { controlPlane } = context.cluster;
  const { tag, dir } = context;
  const folder = await peerFolder('kwok');
  const configPath = join(dir, `kwok-${tag}.yaml`);
  await kwokConfig(folder, configPath);
  const stage = await startPodStage(context, {
    namespace: `kwok-${tag}`,
    scheduler: 'kube-scheduler-kwok',
    nodeAnnotations: { [NODE_ANNOTATION]: tag },
    withNodes: () => {
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
      return { processes: { kwok }, stop: () => stopChild(kwok, 'SIGTERM') };
    },
  });
  return runSide(context, {
    item: 'pod',
    create: (name) => stage.createPod(name),
    done: stage.pods.running,
    what: 'every pod Running',
    // Ready means both work: the warm-up pod Running.
    warmUp: { processes: stage.processes, what: 'pod Running' },
    keep: (key) => key.includes('pods') || key.includes('events'),
    creates: ['POST pods'],
    stop: () => stage.stop(),
  });
}
