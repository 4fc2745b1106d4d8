// The stage the pod-based sides share (binds, DRA, KWOK): Nodes made through the API, small pods,
// kube-scheduler as a process, and a watch that sees which pods are bound and which Running.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Informer, type KubeClient, type KubeObject } from '../../runtime/index.js';
import { createNamespace, inParallel, startLogged, stopChild } from '../harness/index.js';
import { clientLimitFlags, type SideContext } from './measure.js';

/** A pod-based side's stage, set up by startPodStage. */
export interface PodStage {
  /** What runs, by name: kube-scheduler and what runs beside the Nodes (a side waits on them). */
  processes: Record<string, ChildProcess>;
  pods: PodWatch;
  /** Creates a small pod in the side's namespace (with `claimName`, using that claim's device). */
  createPod(name: string, claimName?: string): Promise<void>;
  /** Takes the stage down in the reverse order (a later side's pods must not land on its Nodes). */
  stop(): Promise<void>;
}

/** What a side sets up beside its Nodes (kwok, DRA's slices), and how it is taken down. */
export interface BesideNodes {
  processes?: Record<string, ChildProcess>;
  stop(): Promise<void>;
}

/**
 * Sets a pod-based side's stage up: its namespace, W Nodes, what runs beside the Nodes
 * (`withNodes`), kube-scheduler (its log named `scheduler`), and a watch of the namespace's pods.
 */
export async function startPodStage(
  context: SideContext,
  stage: {
    namespace: string;
    scheduler: string;
    nodeAnnotations?: Record<string, string>;
    withNodes?: (nodes: string[]) => BesideNodes | Promise<BesideNodes>;
  },
): Promise<PodStage> {
  const { admin } = context.cluster;
  await createNamespace(admin, stage.namespace);
  const nodes = await createNodes(context, stage.nodeAnnotations);
  const beside = await stage.withNodes?.(nodes);
  const scheduler = startScheduler(context, stage.scheduler);
  const pods = new PodWatch(admin, stage.namespace);
  await pods.start();
  const podsPath = `/api/v1/namespaces/${stage.namespace}/pods`;
  return {
    processes: { ...beside?.processes, 'kube-scheduler': scheduler },
    pods,
    async createPod(name, claimName) {
      await admin.create(podsPath, podObject(name, claimName));
    },
    async stop() {
      await pods.stop();
      await stopChild(scheduler, 'SIGTERM');
      await beside?.stop();
      await deleteNodes(admin, nodes);
    },
  };
}

function nodeObject(name: string, annotations: Record<string, string> = {}) {
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
function podObject(name: string, claimName?: string) {
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
async function createNodes(
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
async function deleteNodes(admin: KubeClient, nodes: readonly string[]): Promise<void> {
  await inParallel(nodes, 20, (name) =>
    admin.delete(`/api/v1/nodes/${name}`).then(() => undefined),
  );
}

/** kube-scheduler (the pinned binary), no leader election, with the side's client rate limit. */
function startScheduler(context: SideContext, name: string): ChildProcess {
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
