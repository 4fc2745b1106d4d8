// One measured workload: W agents' Lease watches are opened (none under the variant none), then
// N Leases, spread over the W workers, are created, granted (one status PUT each) and deleted, 32
// writes in flight from one client. kube-apiserver's CPU (utime + stime from /proc) is read from
// the first create until every watch has seen every event of its own Leases. Every event is
// checked against the watch that received it: an agent must see its own Leases and no other.
import os from 'node:os';
import { z } from 'zod';
import { API_VERSION, RESOURCES, WORKER_LABEL } from '../../api/index.js';
import {
  resourceVersionOf,
  simlockPath,
  statusReplacement,
  type KubeClient,
} from '../../runtime/index.js';
import { cpuBetween, cpuSeconds, inParallel, waitUntil } from '../harness/index.js';
import { leaseNamespaceOf, watchQuery, type WatchVariant } from './variants.js';

const WATCH_IDLE_MS = 30 * 60_000;

export interface WatchMeasurement {
  run: number;
  variant: WatchVariant;
  watchers: number;
  leases: number;
  /** Events delivered to the watches, and those of a Lease of another worker (must be 0). */
  events: number;
  misdelivered: number;
  ms: number;
  apiserverCpuMsPerLease: number;
  etcdCpuMsPerLease: number;
  /** Node's (this program's) CPU per Lease: the watchers and the writer. */
  clientCpuMsPerLease: number;
  loadAverage: number;
}

export interface WatchContext {
  admin: KubeClient;
  namespace: string;
  watchers: number;
  leases: number;
  /** Leases written at once (each is created, granted and deleted in turn). */
  inFlight: number;
  run: number;
  variant: WatchVariant;
}

const EventObject = z.object({
  metadata: z.object({ name: z.string() }),
  spec: z.object({ worker: z.string() }),
});

export const workerName = (index: number) => `mac-mini-${String(index).padStart(4, '0')}`;
const leaseName = (index: number) => `lease-${String(index).padStart(5, '0')}`;

/** Each Lease makes three events on its worker's watch: ADDED, MODIFIED (the grant), DELETED. */
const EVENTS_PER_LEASE = 3;

export async function measureWatches(context: WatchContext): Promise<WatchMeasurement> {
  const { admin, namespace, variant } = context;
  const workers = Array.from({ length: context.watchers }, (_, index) => workerName(index));
  const stop = new AbortController();
  let events = 0;
  let misdelivered = 0;
  // A watch that ends before the measurement does makes it worthless: said at the next wait.
  const broken: unknown[] = [];
  const namespaceOf = (worker: string) => leaseNamespaceOf(variant, worker, namespace);
  const open = workers.flatMap((worker) => {
    const query = watchQuery(variant, worker);
    if (query === undefined) return [];
    return [
      admin
        .watch(
          simlockPath('lease', { namespace: namespaceOf(worker) }),
          { ...query, resourceVersion: '0' },
          (event) => {
            if (event.type === 'BOOKMARK') return;
            events++;
            if (EventObject.parse(event.object).spec.worker !== worker) misdelivered++;
          },
          stop.signal,
          // Opening a thousand watches takes a minute or two, and no event comes before the
          // measurement: the client's idle limit must not end the first ones meanwhile.
          WATCH_IDLE_MS,
        )
        .then(
          () => {
            if (!stop.signal.aborted) broken.push(new Error(`the watch of ${worker} ended`));
          },
          (error: unknown) => {
            if (!stop.signal.aborted) broken.push(error);
          },
        ),
    ];
  });
  const unbroken = () => {
    if (broken.length > 0)
      throw new Error(`${broken.length} watches ended early; the first: ${String(broken[0])}`);
  };
  try {
    await waitForWatches(admin, open.length, unbroken);
    const cpuBefore = await cpuSeconds();
    const started = performance.now();
    await writeLeases(admin, namespaceOf, context.leases, context.inFlight, workers);
    if (open.length > 0)
      await waitUntil(
        () => {
          unbroken();
          return events >= context.leases * EVENTS_PER_LEASE;
        },
        120_000,
        `${variant}: every watch saw its Leases' events`,
        20,
      );
    const ms = performance.now() - started;
    const cpu = cpuBetween(cpuBefore, await cpuSeconds());
    unbroken();
    const perLease = (seconds: number | undefined) =>
      ((seconds ?? Number.NaN) * 1000) / context.leases;
    const self = Object.entries(cpu).find(([name]) => name.endsWith('lease-watch-cost.ts'))?.[1];
    return {
      run: context.run,
      variant,
      watchers: open.length,
      leases: context.leases,
      events,
      misdelivered,
      ms,
      apiserverCpuMsPerLease: perLease(cpu['kube-apiserver']),
      etcdCpuMsPerLease: perLease(cpu.etcd),
      clientCpuMsPerLease: perLease(self),
      loadAverage: os.loadavg()[0] ?? 0,
    };
  } finally {
    stop.abort();
    await Promise.allSettled(open);
    await waitForWatches(admin, 0);
  }
}

/** Creates, grants and deletes each Lease in turn, `inFlight` Leases at a time. */
async function writeLeases(
  admin: KubeClient,
  namespaceOf: (worker: string) => string,
  count: number,
  inFlight: number,
  workers: readonly string[],
): Promise<void> {
  const indexes = Array.from({ length: count }, (_, index) => index);
  await inParallel(indexes, inFlight, async (index) => {
    const name = leaseName(index);
    const worker = workers[index % workers.length] ?? workerName(0);
    const namespace = namespaceOf(worker);
    const created = await admin.create(simlockPath('lease', { namespace }), {
      apiVersion: API_VERSION,
      kind: RESOURCES.lease.kind,
      metadata: { name, labels: { [WORKER_LABEL]: worker } },
      spec: {
        worker,
        device: { platform: 'ios', model: 'iPhone 16' },
        expiresAt: '2030-01-01T00:00:00.000Z',
        durationSeconds: 3600,
        holder: 'bench',
      },
    });
    const path = simlockPath('lease', { namespace, name });
    await admin.replace(
      `${path}/status`,
      statusReplacement(
        { resource: 'lease', namespace, name, resourceVersion: resourceVersionOf(created) ?? '' },
        { phase: 'Granted', grantedAt: '2026-01-01T00:00:00.000Z', source: 'warm' },
      ),
    );
    await admin.delete(path);
  });
}

/** Waits until kube-apiserver counts `count` open watches of Leases (its own gauge). */
async function waitForWatches(
  admin: KubeClient,
  count: number,
  check: () => void = () => undefined,
): Promise<void> {
  await waitUntil(
    async () => {
      check();
      return (await openLeaseWatches(admin)) === count;
    },
    600_000,
    `${count} Lease watches open`,
    200,
  );
}

export async function openLeaseWatches(admin: KubeClient): Promise<number> {
  const text = String(await admin.get('/metrics'));
  let open = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    if (!line.includes('resource="leases"') || !line.includes('verb="WATCH"')) continue;
    if (!line.includes('group="simlock.dev"')) continue;
    open += Number(line.slice(line.lastIndexOf('}') + 1).trim());
  }
  return open;
}
