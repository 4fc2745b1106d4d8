// Waiting for the chart's pods, and what a failure says: a controller or proxy that cannot start
// in its pod (bad flag, missing permission, wrong port, failing probe) fails the wait at once when
// it crash-loops or cannot be created, else at the deadline, with each pod's logs and events.
import { eventually } from '../../test/cluster/harness.js';
import { must, type KindRun } from './kind.js';

interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  state?: { waiting?: { reason?: string; message?: string } };
}

export interface PodObject {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: { phase?: string; containerStatuses?: ContainerStatus[] };
}

interface DeploymentObject {
  metadata: { name: string; generation?: number };
  spec: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

/** Waiting reasons that no amount of waiting cures. */
const hopeless = new Set([
  'CrashLoopBackOff',
  'ErrImagePull',
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'InvalidImageName',
]);

export async function pods(kind: KindRun, namespace: string, selector = ''): Promise<PodObject[]> {
  const args = ['-n', namespace, 'get', 'pods', '-o', 'json'];
  if (selector) args.push('-l', selector);
  return (
    JSON.parse(must(await kind.kubectl(args, { record: false }), 'kubectl get pods')) as {
      items: PodObject[];
    }
  ).items;
}

/** Every pod of the namespace: its state, the end of its logs (and of its last run), its events. */
export async function podReport(kind: KindRun, namespace: string): Promise<string> {
  const sections: string[] = [];
  for (const pod of await pods(kind, namespace).catch(() => [])) {
    const name = pod.metadata.name;
    const states = (pod.status?.containerStatuses ?? [])
      .map(
        (c) => `${c.name} ready=${c.ready} restarts=${c.restartCount} ${JSON.stringify(c.state)}`,
      )
      .join('; ');
    const logs = await kind.kubectl([
      '-n',
      namespace,
      'logs',
      name,
      '--all-containers',
      '--tail=40',
    ]);
    const previous = await kind.kubectl([
      '-n',
      namespace,
      'logs',
      name,
      '--all-containers',
      '--previous',
      '--tail=40',
    ]);
    const events = await kind.kubectl([
      '-n',
      namespace,
      'get',
      'events',
      '--field-selector',
      `involvedObject.name=${name}`,
      '-o',
      'custom-columns=REASON:.reason,MESSAGE:.message',
      '--no-headers',
    ]);
    sections.push(
      [
        `--- pod ${name} (${pod.status?.phase ?? '?'}): ${states}`,
        `logs:\n${logs.stdout}${logs.stderr}`,
        previous.exitCode === 0 ? `logs of the previous run:\n${previous.stdout}` : '',
        `events:\n${events.stdout}`,
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }
  return sections.join('\n');
}

/** Resolves once each Deployment has all its replicas updated, ready and available. */
export async function waitForRollout(
  kind: KindRun,
  namespace: string,
  deployments: string[],
  timeoutMs = 180_000,
): Promise<void> {
  let outcome: { hopeless?: string } | undefined;
  try {
    outcome = await eventually(
      async (): Promise<{ hopeless?: string } | undefined> => {
        for (const pod of await pods(kind, namespace)) {
          for (const container of pod.status?.containerStatuses ?? []) {
            const reason = container.state?.waiting?.reason ?? '';
            if (hopeless.has(reason) && !pod.metadata.deletionTimestamp) {
              return { hopeless: `pod ${pod.metadata.name}: ${container.name} ${reason}` };
            }
          }
        }
        for (const name of deployments) {
          const deployment = JSON.parse(
            must(
              await kind.kubectl(['-n', namespace, 'get', 'deployment', name, '-o', 'json'], {
                record: false,
              }),
              'kubectl get deployment',
            ),
          ) as DeploymentObject;
          const wanted = deployment.spec.replicas ?? 1;
          const status = deployment.status ?? {};
          const done =
            (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0) &&
            status.replicas === wanted &&
            status.updatedReplicas === wanted &&
            status.readyReplicas === wanted &&
            status.availableReplicas === wanted;
          if (!done) return undefined;
        }
        return {};
      },
      { timeoutMs, intervalMs: 1000, what: `deployments ${deployments.join(', ')} rolled out` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await podReport(kind, namespace)}`);
  }
  if (outcome.hopeless) {
    throw new Error(`${outcome.hopeless}\n${await podReport(kind, namespace)}`);
  }
}
