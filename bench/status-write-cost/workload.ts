// One measured workload under one variant: N requests are created (not measured), then their
// status PUTs are made, 32 in flight from one client, each onto the version the previous answer
// gave; kube-apiserver's CPU (utime + stime from /proc) is read around the PUTs alone. Then the
// requests are deleted, so that the next variant's new watch cache does not start by listing them.
// Under grouped-workers a waiting status carries its reasons in status.workerGroups instead.
// granted-over-W: each request first given (not measured) the Waiting status of W reasons the
// controller writes (status.workers grouped by reason, ADR 0033), then its Granted status: what a
// grant costs when the request waited on a fleet of W workers, against `granted` (it never did).
import os from 'node:os';
import { z } from 'zod';
import type { LeaseRequestStatus } from '../../api/index.js';
import {
  KubeApiError,
  KubeUnavailableError,
  TokenBucket,
  resourceVersionOf,
  simlockPath,
  statusReplacement,
  type KubeClient,
} from '../../runtime/index.js';
import { cpuBetween, cpuSeconds, inParallel, percentile, waitUntil } from '../harness/index.js';
import {
  grantedStatus,
  productWaitingStatus,
  waitingGroupedStatus,
  waitingStatus,
  workerName,
} from './statuses.js';
import { writesGroups, type Variant } from './variants.js';

export const IN_FLIGHT = 32;

/**
 * waiting-W: writes-per-request Waiting statuses of W reasons; granted: one Granted status;
 * granted-over-W: one Granted status over the product's Waiting status of W reasons.
 */
export type Workload =
  | { kind: 'waiting'; workers: number }
  | { kind: 'granted' }
  | { kind: 'granted-over'; workers: number };

export function workloadName(workload: Workload): string {
  return workload.kind === 'granted' ? 'granted' : `${workload.kind}-${workload.workers}`;
}

export interface Measurement {
  run: number;
  variant: Variant;
  workload: string;
  /** Status PUTs answered 2xx. */
  writes: number;
  /** Refused (or failed) PUTs by HTTP code, or "unavailable"; all should be 0. */
  refused: Record<string, number>;
  ms: number;
  writesPerSecond: number;
  apiserverCpuMsPerWrite: number;
  etcdCpuMsPerWrite: number;
  /** This program's own CPU (the client), per write. */
  clientCpuMsPerWrite: number;
  p50Ms: number;
  p99Ms: number;
  /** The JSON body of one PUT, in bytes. */
  bodyBytes: number;
  /** One request as stored after its writes (managed fields included), in bytes of JSON. */
  storedBytes: number;
  loadAverage: number;
  /** Among watchers (surroundings.ts): the events they got over the workload (its creates and deletes too), per write. */
  watchEventsPerWrite?: number;
}

export interface WorkloadContext {
  admin: KubeClient;
  namespace: string;
  requests: number;
  writesPerRequest: number;
  run: number;
  variant: Variant;
  /** The measured PUTs at most this many a second (as a rate-limited client writes); 0: at once. */
  writeRate?: number;
}

const List = z.object({ items: z.array(z.unknown()) });

const requestName = (index: number) => `r-${String(index).padStart(4, '0')}`;

export async function measureWorkload(
  context: WorkloadContext,
  workload: Workload,
): Promise<Measurement> {
  const { admin, namespace } = context;
  const names = Array.from({ length: context.requests }, (_, index) => requestName(index));
  const versions = await createRequests(admin, namespace, names);
  if (workload.kind === 'granted-over')
    await writeStatuses(admin, namespace, names, versions, () =>
      productWaitingStatus(workload.workers),
    );
  // The creates' events reach the watch cache after their answers: let them land first.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const writesPerRequest = workload.kind === 'waiting' ? context.writesPerRequest : 1;
  const waiting = writesGroups(context.variant) ? waitingGroupedStatus : waitingStatus;
  const statusFor = (index: number, write: number) =>
    workload.kind === 'waiting'
      ? waiting(workload.workers, write, index)
      : grantedStatus(requestName(index), workerName(index % 100));
  const latencies: number[] = [];
  const refused: Record<string, number> = {};
  const refuse = (code: string) => (refused[code] = (refused[code] ?? 0) + 1);
  let writes = 0;

  const limiter =
    (context.writeRate ?? 0) > 0
      ? new TokenBucket({ qps: context.writeRate ?? 1, burst: 1 })
      : undefined;
  const cpuBefore = await cpuSeconds();
  const started = performance.now();
  await inParallel(names, IN_FLIGHT, async (name, index) => {
    const path = simlockPath('leaseRequest', { namespace, name, subresource: 'status' });
    let version = versions.get(name) ?? '';
    for (let write = 0; write < writesPerRequest; write++) {
      const body = statusReplacement(
        { resource: 'leaseRequest', namespace, name, resourceVersion: version },
        statusFor(index, write),
      );
      await limiter?.take();
      const sent = performance.now();
      try {
        const answer = await admin.replace(path, body);
        latencies.push(performance.now() - sent);
        version = resourceVersionOf(answer) ?? version;
        writes++;
      } catch (error) {
        if (error instanceof KubeApiError) refuse(String(error.status));
        else if (error instanceof KubeUnavailableError) refuse('unavailable');
        else throw error;
        // A conflict would stop the request's later writes: read its version and go on.
        if (error instanceof KubeApiError && error.status === 409)
          version = resourceVersionOf(await admin.get(path.replace(/\/status$/, ''))) ?? version;
      }
    }
  });
  const ms = performance.now() - started;
  const cpu = cpuBetween(cpuBefore, await cpuSeconds());
  const loadAverage = os.loadavg()[0] ?? 0;
  const stored = await admin.get(simlockPath('leaseRequest', { namespace, name: names[0] ?? '' }));
  const storedBytes = Buffer.byteLength(JSON.stringify(stored));

  await deleteRequests(admin, namespace);
  const perWrite = (seconds: number | undefined) => ((seconds ?? Number.NaN) * 1000) / writes;
  const self = Object.entries(cpu).find(([name]) => name.endsWith('status-write-cost.ts'))?.[1];
  return {
    run: context.run,
    variant: context.variant,
    workload: workloadName(workload),
    writes,
    refused,
    ms,
    writesPerSecond: (writes * 1000) / ms,
    apiserverCpuMsPerWrite: perWrite(cpu['kube-apiserver']),
    etcdCpuMsPerWrite: perWrite(cpu.etcd),
    clientCpuMsPerWrite: perWrite(self),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    bodyBytes: Buffer.byteLength(
      JSON.stringify(
        statusReplacement(
          { resource: 'leaseRequest', namespace, name: requestName(0), resourceVersion: '1' },
          statusFor(0, 1),
        ),
      ),
    ),
    storedBytes,
    loadAverage,
  };
}

/** Creates the requests (a spec as `kubectl simlock lease` writes one); answers their versions. */
export async function createRequests(
  admin: KubeClient,
  namespace: string,
  names: readonly string[],
): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  await inParallel(names, IN_FLIGHT, async (name) => {
    const answer = await admin.create(simlockPath('leaseRequest', { namespace }), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'LeaseRequest',
      metadata: { name },
      spec: {
        platform: 'ios',
        model: 'iPhone 16',
        os: '>=18 <19',
        holder: 'ci',
        waitTimeoutSeconds: 3600,
        durationSeconds: 3600,
      },
    });
    const version = resourceVersionOf(answer);
    if (version === undefined) throw new Error(`create ${name}: no resourceVersion in the answer`);
    versions.set(name, version);
  });
  return versions;
}

/** One status PUT per request, not measured; `versions` takes each answer's version. */
export async function writeStatuses(
  admin: KubeClient,
  namespace: string,
  names: readonly string[],
  versions: Map<string, string>,
  statusOf: (name: string) => LeaseRequestStatus,
): Promise<void> {
  await inParallel(names, IN_FLIGHT, async (name) => {
    const path = simlockPath('leaseRequest', { namespace, name, subresource: 'status' });
    const body = statusReplacement(
      { resource: 'leaseRequest', namespace, name, resourceVersion: versions.get(name) ?? '' },
      statusOf(name),
    );
    const version = resourceVersionOf(await admin.replace(path, body));
    if (version === undefined) throw new Error(`status of ${name}: no resourceVersion`);
    versions.set(name, version);
  });
}

async function deleteRequests(admin: KubeClient, namespace: string): Promise<void> {
  const collection = simlockPath('leaseRequest', { namespace });
  await admin.delete(collection, { timeoutMs: 120_000 });
  await waitUntil(
    async () => {
      const list = List.parse(await admin.get(collection, { query: { limit: 1 } }));
      return list.items.length === 0;
    },
    60_000,
    `requests of ${namespace} deleted`,
    250,
  );
}
