// Waiting for the chart's pods, and what a failure says. A controller or proxy that cannot start in
// its pod fails the wait as soon as waiting is hopeless, with each pod's state, logs (of this run
// and the last) and events in the message: at once when it crash-loops or cannot be created (a bad
// flag, a missing permission: the process exits), or when kubelet restarts it for a failed startup
// or liveness probe; after `unhealthyForMs` when it runs but its probes keep failing (a wrong port:
// the startup probe refused; a readiness probe that never passes), which a healthy pod of the
// chart never does for that long (its processes answer within seconds); else at the deadline.
import { eventually } from '../../test/cluster/harness.js';
import { must, type KindRun } from './kind.js';

interface ContainerStatus {
  name: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: { startedAt?: string } };
}

export interface PodObject {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: ContainerStatus[];
  };
}

/** A core/v1 Event as kubectl shows it; kubelet counts repeats in `count` (or in `series`). */
interface EventObject {
  involvedObject?: { name?: string };
  reason?: string;
  firstTimestamp?: string | null;
  message?: string;
  count?: number;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string };
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

/** How long a running pod may fail its probes before the wait gives up on it. */
export const UNHEALTHY_FOR_MS = 20_000;

export async function pods(kind: KindRun, namespace: string, selector = ''): Promise<PodObject[]> {
  const args = ['-n', namespace, 'get', 'pods', '-o', 'json'];
  if (selector) args.push('-l', selector);
  return (
    JSON.parse(must(await kind.kubectl(args, { record: false }), 'kubectl get pods')) as {
      items: PodObject[];
    }
  ).items;
}

async function namespaceEvents(
  kind: KindRun,
  namespace: string,
  pod?: string,
): Promise<EventObject[]> {
  const args = ['-n', namespace, 'get', 'events', '-o', 'json'];
  if (pod) args.push('--field-selector', `involvedObject.name=${pod}`);
  const answer = await kind.kubectl(args, { record: false });
  return answer.exitCode === 0 ? (JSON.parse(answer.stdout) as { items: EventObject[] }).items : [];
}

const timesOf = (event: EventObject) => event.series?.count ?? event.count ?? 1;
const lastOf = (event: EventObject) =>
  Date.parse(event.series?.lastObservedTime ?? event.lastTimestamp ?? event.eventTime ?? '') || 0;

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
      ...['-n', namespace, 'logs', name, '--all-containers', '--previous', '--tail=40'],
    ]);
    const events = (await namespaceEvents(kind, namespace, name))
      .map((event) => `${event.reason ?? '?'} (x${timesOf(event)}): ${event.message ?? ''}\n`)
      .join('');
    sections.push(
      [
        `--- pod ${name} (${pod.status?.phase ?? '?'}): ${states}`,
        `logs:\n${logs.stdout}${logs.stderr}`,
        previous.exitCode === 0 ? `logs of the previous run:\n${previous.stdout}` : '',
        `events:\n${events}`,
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }
  return sections.join('\n');
}

/** Why waiting for this pod is hopeless by its containers' states, or undefined. */
function hopelessState(pod: PodObject): string | undefined {
  for (const container of pod.status?.containerStatuses ?? []) {
    const reason = container.state?.waiting?.reason ?? '';
    if (hopeless.has(reason)) return `pod ${pod.metadata.name}: ${container.name} ${reason}`;
  }
  return undefined;
}

/**
 * Why waiting for this pod is hopeless by its events: kubelet restarted it for a failed startup
 * or liveness probe, or a probe has failed for `unhealthyForMs` without a pause (kubelet counts
 * repeats of one message in one Event: failures at most 10 s apart, the slowest probe's period,
 * and the last of them recent). A pod that failed once long ago and again now does not count.
 */
function hopelessEvents(
  pod: PodObject,
  events: EventObject[],
  unhealthyForMs: number,
  now: number,
): string | undefined {
  const name = pod.metadata.name;
  if ((pod.status?.containerStatuses ?? []).every((container) => container.ready)) return undefined;
  const own = events.filter((event) => event.involvedObject?.name === name);
  const restarted = own.find(
    (event) =>
      event.reason === 'Killing' && /failed (startup|liveness) probe/.test(event.message ?? ''),
  );
  if (restarted) return `pod ${name}: ${restarted.message ?? ''}`;
  for (const event of own.filter((each) => each.reason === 'Unhealthy')) {
    const times = timesOf(event);
    const first = Date.parse(event.firstTimestamp ?? '') || lastOf(event);
    const spanMs = lastOf(event) - first;
    const steady = times >= 3 && spanMs / (times - 1) <= 10_000;
    if (steady && spanMs >= unhealthyForMs && now - lastOf(event) < 15_000) {
      return `pod ${name}: a probe failing for ${Math.round(spanMs / 1000)} s (x${times}): ${event.message ?? ''}`;
    }
  }
  return undefined;
}

export interface RolloutWait {
  /** The backstop: how long to wait for a rollout that is not seen to be hopeless. */
  timeoutMs?: number;
  /** How long a running pod may fail its probes before the rollout counts as hopeless. */
  unhealthyForMs?: number;
  /**
   * Pods of before a fix, given time to recover (or to be replaced): their failures are old news,
   * and only the deadline ends the wait for them.
   */
  known?: string[];
}

/** Resolves once each Deployment has all its replicas updated, ready and available. */
export async function waitForRollout(
  kind: KindRun,
  namespace: string,
  deployments: string[],
  { timeoutMs = 180_000, unhealthyForMs = UNHEALTHY_FOR_MS, known = [] }: RolloutWait = {},
): Promise<void> {
  let outcome: { hopeless?: string } | undefined;
  try {
    outcome = await eventually(
      async (): Promise<{ hopeless?: string } | undefined> => {
        const current = (await pods(kind, namespace)).filter(
          (pod) => !pod.metadata.deletionTimestamp && !known.includes(pod.metadata.name),
        );
        for (const pod of current) {
          const reason = hopelessState(pod);
          if (reason) return { hopeless: reason };
        }
        const rolledOut = async (name: string): Promise<boolean> => {
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
          return done;
        };
        let done = true;
        for (const name of deployments) done &&= await rolledOut(name);
        if (done) return {};
        // Not there yet: the pods' events say whether it may still come (one kubectl for all).
        const events = await namespaceEvents(kind, namespace);
        for (const pod of current) {
          const reason = hopelessEvents(pod, events, unhealthyForMs, Date.now());
          if (reason) return { hopeless: reason };
        }
        return undefined;
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
