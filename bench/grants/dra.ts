// DRA: kube-scheduler (the pinned binary) allocating one device to each of N ResourceClaims from
// ResourceSlices published by hand (as upstream's scheduler_perf does; no kubelet or DRA driver
// runs), and binding the pod that uses it. A request granted one device on a host, by the
// scheduler itself. Writes per allocation: the claim's finalizer, its status, the binding and an
// Event; with the finalizer preset on the claim (`dra-preset-finalizer`), one fewer.
import { z } from 'zod';
import type { KubeClient } from '../../runtime/index.js';
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
  startScheduler,
  waitForProcess,
} from './nodes.js';

const DRIVER = 'bench.simlock.dev';
/** The finalizer kube-scheduler puts on a claim before it writes the allocation. */
const CLAIM_FINALIZER = 'resource.kubernetes.io/delete-protection';
const RESOURCE = '/apis/resource.k8s.io/v1';

function claimObject(name: string, deviceClass: string, presetFinalizer: boolean) {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name, ...(presetFinalizer ? { finalizers: [CLAIM_FINALIZER] } : {}) },
    spec: {
      devices: { requests: [{ name: 'device', exactly: { deviceClassName: deviceClass } }] },
    },
  };
}

/** One slice per Node, its own pool, with `slots` devices (at most 128 in a slice). */
function sliceObject(node: string, slots: number) {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: node },
    spec: {
      driver: DRIVER,
      nodeName: node,
      pool: { name: node, generation: 1, resourceSliceCount: 1 },
      devices: Array.from({ length: slots }, (_, index) => ({ name: `device-${index}` })),
    },
  };
}

const claimList = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      status: z
        .object({
          allocation: z
            .object({
              devices: z.object({
                results: z
                  .array(z.object({ driver: z.string(), pool: z.string(), device: z.string() }))
                  .optional(),
              }),
            })
            .optional(),
        })
        .optional(),
    }),
  ),
});

/** Reads every claim of the namespace: how many hold a device, and how many devices twice. */
async function checkAllocations(
  admin: KubeClient,
  namespace: string,
): Promise<{ allocated: number; doubleAllocations: number }> {
  const claims = claimList.parse(
    await admin.get(`${RESOURCE}/namespaces/${namespace}/resourceclaims`),
  );
  const holders = new Map<string, number>();
  let allocated = 0;
  for (const claim of claims.items) {
    const results = claim.status?.allocation?.devices.results ?? [];
    if (results.length > 0) allocated++;
    for (const result of results) {
      const key = `${result.driver}/${result.pool}/${result.device}`;
      holders.set(key, (holders.get(key) ?? 0) + 1);
    }
  }
  const doubleAllocations = [...holders.values()].filter((count) => count > 1).length;
  return { allocated, doubleAllocations };
}

export async function draSide(context: SideContext, presetFinalizer: boolean): Promise<SideResult> {
  const { admin } = context.cluster;
  const { size, tag, options } = context;
  const namespace = `claims-${tag}`;
  const deviceClass = `bench-${tag}`;
  await createNamespace(admin, namespace);
  await admin.create(`${RESOURCE}/deviceclasses`, {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceClass',
    metadata: { name: deviceClass },
    spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
  });
  const nodes = await createNodes(context);
  // As many devices as simlock's workers have simulators: a fifth more than their share.
  const slots = Math.min(128, Math.ceil((size.requests / size.workers) * 1.2));
  await inParallel(nodes, 20, async (node) => {
    await admin.create(`${RESOURCE}/resourceslices`, sliceObject(node, slots));
  });
  const scheduler = startScheduler(context, 'kube-scheduler-dra');
  const pods = new PodWatch(admin, namespace);
  await pods.start();
  const claimsPath = `${RESOURCE}/namespaces/${namespace}/resourceclaims`;
  const podsPath = `/api/v1/namespaces/${namespace}/pods`;
  const createPair = async (name: string) => {
    await admin.create(claimsPath, claimObject(name, deviceClass, presetFinalizer));
    await admin.create(podsPath, podObject(name, name));
  };
  try {
    // Ready means it allocates and binds: one claim and pod first, outside the count.
    await createPair('warm-up');
    await waitForProcess(
      scheduler,
      'kube-scheduler',
      () => pods.bound.has('warm-up'),
      'allocation',
    );
    pods.clear();
    const start = await startOfSide(admin);
    const names = Array.from({ length: size.requests }, (_, index) => `claim-${index}`);
    await inParallel(names, options.concurrency, createPair);
    // A pod is bound only after its claim's allocation is written (PreBind): bound means allocated.
    const end = await endOfSide(admin, start, {
      done: () => pods.bound.size >= size.requests,
      what: 'every claim allocated',
      timeoutMs: options.sideTimeoutMs,
      keep: (key) =>
        key.includes('pods') || key.includes('events') || key.includes('resourceclaims'),
      creates: {
        'POST pods': size.requests,
        'POST resource.k8s.io/resourceclaims': size.requests,
      },
    });
    const { allocated, doubleAllocations } = await checkAllocations(admin, namespace);
    return sideResult(end, pods.bound.size, size.requests, {
      doubleAllocations,
      // Claims left without a device although their pod counted (never seen so far).
      failed: Math.max(0, pods.bound.size + 1 - allocated),
    });
  } finally {
    await pods.stop();
    await stopChild(scheduler, 'SIGTERM');
    await inParallel(nodes, 20, (node) =>
      admin.delete(`${RESOURCE}/resourceslices/${node}`).then(() => undefined),
    );
    await admin.delete(`${RESOURCE}/deviceclasses/${deviceClass}`);
    await deleteNodes(admin, nodes);
  }
}
