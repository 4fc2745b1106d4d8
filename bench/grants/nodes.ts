// What the pod-based sides share (binds, DRA, KWOK): Nodes made through the API, small pods,
// kube-scheduler as a process, and a watch that sees which pods are bound.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Informer, type KubeClient, type KubeObject } from '../../runtime/index.js';
import { inParallel, onInterrupt, stopChild, waitUntil } from '../harness/index.js';
import { clientLimitFlags, type SideContext } from './measure.js';

export function nodeObject(name: string, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name }, annotations },
    spec: {},
  };
}

function nodeStatus(pods: number) {
  const capacity = { cpu: '1000', memory: '4000Gi', pods: String(pods) };
  const now = new Date().toISOString();
  return {
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'benchmark node',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}

/** A small pod; with `claimName`, its container uses the one device of that ResourceClaim. */
export function podObject(name: string, claimName?: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          resources: {
            requests: { cpu: '1m', memory: '1Mi' },
            ...(claimName ? { claims: [{ name: 'device' }] } : {}),
          },
        },
      ],
      ...(claimName ? { resourceClaims: [{ name: 'device', resourceClaimName: claimName }] } : {}),
      terminationGracePeriodSeconds: 0,
    },
  };
}

/**
 * W Ready, untainted Nodes with room for twice their share of pods. Annotations mark them for a
 * node agent (kwok manages only Nodes so annotated).
 */
export async function createNodes(
  context: SideContext,
  annotations: Record<string, string> = {},
): Promise<string[]> {
  const { admin } = context.cluster;
  const { size, tag } = context;
  const nodes = Array.from({ length: size.workers }, (_, index) => `node-${tag}-${index}`);
  const podsPerNode = Math.max(110, Math.ceil((size.requests / size.workers) * 2));
  await inParallel(nodes, 20, async (name) => {
    await admin.create('/api/v1/nodes', nodeObject(name, annotations));
    // The TaintNodesByCondition admission plugin taints a new Node not-ready, and no node
    // lifecycle controller runs here to lift it: the Node is Ready, so lift it as that would.
    await admin.patch(`/api/v1/nodes/${name}`, { spec: { taints: null } });
    await admin.patch(`/api/v1/nodes/${name}/status`, nodeStatus(podsPerNode));
  });
  return nodes;
}

/** Its Nodes would take a later side's pods: each side deletes its own. */
export async function deleteNodes(admin: KubeClient, nodes: readonly string[]): Promise<void> {
  await inParallel(nodes, 20, (name) =>
    admin.delete(`/api/v1/nodes/${name}`).then(() => undefined),
  );
}

/** A process of ours, logged to a file, killed if the benchmark is interrupted. */
export function startLogged(
  binary: string,
  args: string[],
  logPath: string,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const forget = onInterrupt(() => stopChild(child, 'SIGKILL'));
  child.once('exit', forget);
  const logFile = createWriteStream(logPath);
  child.stdout?.pipe(logFile);
  child.stderr?.pipe(logFile);
  return child;
}

/** kube-scheduler (the pinned binary), no leader election, with the side's client rate limit. */
export function startScheduler(context: SideContext, name: string): ChildProcess {
  const { controlPlane } = context.cluster;
  return startLogged(
    join(controlPlane.binDir, 'kube-scheduler'),
    [
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--v=1',
      ...clientLimitFlags(context.qps),
    ],
    join(context.dir, `${name}-${context.tag}.log`),
  );
}

/** Pods of one namespace as a watch sees them: which are bound, and which are Running. */
export class PodWatch {
  readonly bound = new Set<string>();
  readonly running = new Set<string>();
  private readonly informer: Informer;

  constructor(admin: KubeClient, namespace: string) {
    this.informer = new Informer(admin, { path: `/api/v1/namespaces/${namespace}/pods` });
    this.informer.on((event) => {
      if (event.type === 'deleted') return;
      const name = event.object.metadata.name;
      if (podNode(event.object)) this.bound.add(name);
      if (podPhase(event.object) === 'Running') this.running.add(name);
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  /** Forgets what was seen so far (the warm-up pod). */
  clear(): void {
    this.bound.clear();
    this.running.clear();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}

function podNode(object: KubeObject): string | undefined {
  return (object.spec as { nodeName?: string } | undefined)?.nodeName;
}

function podPhase(object: KubeObject): string | undefined {
  return (object.status as { phase?: string } | undefined)?.phase;
}

/** Waits until `ready` holds, failing at once if the process it waits on has exited. */
export async function waitForProcess(
  child: ChildProcess,
  name: string,
  ready: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`${name} exited; see its log`);
      return ready();
    },
    timeoutMs,
    what,
  );
}
