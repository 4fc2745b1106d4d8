// What would unblock a waiting request, asked with the caller's own credentials (ADR 0026): the
// request, the Workers and the leases held (read off their requests: ADR 0034) are read, and api's
// pure `answerWhyOf` runs the routing stages on changed views. Nothing is written and the
// controller is not asked.
import {
  answerWhyOf,
  reasonsByWorker,
  type HeldLease,
  type LeaseRequestObject,
  type WhyAnswer,
  type WorkerObject,
} from '../api/index.js';
import { KubeApiError, type KubeClient } from '../runtime/index.js';
import { listRequests, listWorkers, readRequest, type Warn } from './kube.js';

export interface WhyOptions {
  /** The clock for the answer's times (ms); the machine's by default. */
  now?: number;
  warn?: Warn;
}

/** The leases these requests hold, as `why` counts them: granted, not being released. */
export function heldLeasesOf(requests: readonly LeaseRequestObject[]): HeldLease[] {
  const held: HeldLease[] = [];
  for (const { metadata, spec, status } of requests) {
    if (status?.phase !== 'Granted' || metadata.deletionTimestamp !== undefined) continue;
    if (status.worker === undefined || status.expiresAt === undefined) continue;
    held.push({
      namespace: metadata.namespace ?? '',
      name: metadata.name,
      worker: status.worker,
      endsAt: status.expiresAt,
      platform: spec.platform,
      device: status.device?.id,
    });
  }
  return held;
}

/**
 * Leases held in every namespace where the caller may list requests; else in the request's
 * namespace alone (a lease elsewhere is then not offered as ending), said in a warning.
 */
export async function readableLeases(
  client: KubeClient,
  namespace: string,
  warn: Warn,
): Promise<HeldLease[]> {
  try {
    return heldLeasesOf((await listRequests(client, undefined, warn)).map((r) => r.object));
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    warn(`cannot list leaserequests in every namespace; only leases in ${namespace} are counted`);
    return heldLeasesOf((await listRequests(client, namespace, warn)).map((r) => r.object));
  }
}

/** What would unblock `request`, counting the leases held on the workers its reasons name. */
export function answerWhyOver(
  request: LeaseRequestObject,
  workers: readonly WorkerObject[],
  leases: readonly HeldLease[],
  now: number,
): WhyAnswer {
  const names = new Set(reasonsByWorker(request.status).map((entry) => entry.worker));
  const held = leases.filter((lease) => names.has(lease.worker));
  return answerWhyOf(request, workers, held, now);
}

export async function whyWaiting(
  client: KubeClient,
  namespace: string,
  name: string,
  options: WhyOptions = {},
): Promise<WhyAnswer> {
  const warn = options.warn ?? (() => undefined);
  const request = await readRequest(client, namespace, name, 'request');
  const now = options.now ?? Date.now();
  if (request.status?.phase !== 'Waiting') return answerWhyOver(request, [], [], now);
  const [workers, leases] = await Promise.all([
    listWorkers(client, warn).then((list) => list.map((worker) => worker.object)),
    readableLeases(client, namespace, warn),
  ]);
  return answerWhyOver(request, workers, leases, now);
}
