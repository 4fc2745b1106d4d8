// DRA: kube-scheduler (the pinned binary) allocating one device to each of N ResourceClaims from
// ResourceSlices published by hand (as upstream's scheduler_perf does; no kubelet or DRA driver
// runs), and binding the pod that uses it. A request granted one device on a host, by the
// scheduler itself. Writes per allocation: the claim's finalizer, its status, the binding and an
// Event; with the finalizer preset on the claim (`dra-preset-finalizer`), one fewer.
import { z } from 'zod';
import type { KubeClient } from '../../runtime/index.js';
import { inParallel } from '../harness/index.js';
import type { SideContext, SideResult } from './measure.js';
import { startPodStage } from './pod-stage.js';
import { runSide } from './side.js';

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
  const { size, tag } = context;
  const namespace = `claims-${tag}`;
  const deviceClass = `bench-${tag}`;
  const stage = await startPodStage(context, {
    namespace,
    scheduler: 'kube-scheduler-dra',
    withNodes: async (nodes) => {
      await admin.create(`${RESOURCE}/deviceclasses`, {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: deviceClass },
        spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
      });
      // As many devices as simlock's workers have simulators: a fifth more than their share.
      const slots = Math.min(128, Math.ceil((size.requests / size.workers) * 1.2));
      await inParallel(nodes, 20, async (node) => {
        await admin.create(`${RESOURCE}/resourceslices`, sliceObject(node, slots));
      });
      return {
        stop: async () => {
          await inParallel(nodes, 20, (node) =>
            admin.delete(`${RESOURCE}/resourceslices/${node}`).then(() => undefined),
          );
          await admin.delete(`${RESOURCE}/deviceclasses/${deviceClass}`);
        },
      };
    },
  });
  const claimsPath = `${RESOURCE}/namespaces/${namespace}/resourceclaims`;
  return runSide(context, {
    item: 'claim',
    create: async (name) => {
      await admin.create(claimsPath, claimObject(name, deviceClass, presetFinalizer));
      await stage.createPod(name, name);
    },
    // A pod is bound only after its claim's allocation is written (PreBind): bound means allocated.
    done: stage.pods.bound,
    what: 'every claim allocated',
    // Ready means it allocates and binds.
    warmUp: { processes: stage.processes, what: 'allocation' },
    keep: (key) => key.includes('pods') || key.includes('events') || key.includes('resourceclaims'),
    creates: ['POST pods', 'POST resource.k8s.io/resourceclaims'],
    extra: async () => {
      const { allocated, doubleAllocations } = await checkAllocations(admin, namespace);
      return {
        doubleAllocations,
        // Claims left without a device although their pod counted (never seen so far).
        failed: Math.max(0, stage.pods.bound.size + 1 - allocated),
      };
    },
    stop: () => stage.stop(),
  });
}
