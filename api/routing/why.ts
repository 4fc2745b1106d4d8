// `why` over the objects a person reads (ADR 0026): the request, the Workers, the Leases. Views are
// built as the controller builds them, except the connection, which is taken from the request's
// own reasons (the controller wrote `disconnected` or `incompatible` for a worker whose heartbeat
// lapsed or whose protocol it cannot speak), so no heartbeat Lease need be read. Pure: the
// plugin, MCP and the console read the objects and call this.
import type { LeaseObject } from '../lease-schema.js';
import type {
  DeviceSpec,
  LeaseRequestObject,
  RequestPhase,
  WorkerReasonItem,
} from '../lease-request-schema.js';
import { reasonsByWorker } from '../worker-reasons.js';
import { unblockLines, type WhyAnswer } from '../unblock.js';
import { WorkerStatus, type WorkerObject } from '../worker-schema.js';
import type { Connection, WorkerView } from './types.js';
import { findUnblocks, type HeldLease } from './unblock.js';

/** What `why` reads of a request: a LeaseRequest, or the console's row of one. */
export interface WhyRequest {
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
  readonly spec: DeviceSpec;
  readonly status?:
    | { readonly phase: RequestPhase; readonly workers?: readonly WorkerReasonItem[] | undefined }
    | undefined;
}

/** The device fields of a request's spec: what routing reads. */
function deviceSpecOf(request: WhyRequest): DeviceSpec {
  const { platform, model, class: deviceClass, os, physical, requires } = request.spec;
  return {
    platform,
    ...(model !== undefined ? { model } : {}),
    ...(deviceClass !== undefined ? { class: deviceClass } : {}),
    ...(os !== undefined ? { os } : {}),
    ...(physical !== undefined ? { physical } : {}),
    ...(requires !== undefined ? { requires } : {}),
  };
}

function connectionFrom(reason: string | undefined): Connection {
  if (reason === 'disconnected') return 'disconnected';
  if (reason === 'incompatible') return 'incompatible';
  return 'connected';
}

/** The views of the workers the request's reasons name (the controller's known workers). */
export function whyViews(request: WhyRequest, workers: readonly WorkerObject[]): WorkerView[] {
  const reasons = new Map(
    reasonsByWorker(request.status).map((entry) => [entry.worker, entry.reason]),
  );
  return workers
    .filter((worker) => reasons.has(worker.metadata.name))
    .map((worker) => {
      const parsed =
        worker.status === undefined ? undefined : WorkerStatus.safeParse(worker.status);
      return {
        name: worker.metadata.name,
        connection: connectionFrom(reasons.get(worker.metadata.name)),
        drained: worker.spec.drained,
        status: parsed?.success === true ? parsed.data : undefined,
      };
    });
}

/** Granted leases on the given workers, with their ends. */
export function heldLeases(
  leases: readonly LeaseObject[],
  workers: ReadonlySet<string>,
): HeldLease[] {
  return leases
    .filter(
      (lease) =>
        lease.status?.phase === 'Granted' &&
        lease.metadata.deletionTimestamp === undefined &&
        workers.has(lease.spec.worker),
    )
    .map((lease) => ({
      namespace: lease.metadata.namespace ?? '',
      name: lease.metadata.name,
      worker: lease.spec.worker,
      endsAt: lease.spec.expiresAt,
      platform: lease.spec.device.platform,
      device: lease.status?.device?.id,
    }));
}

/** What would unblock the request, as `why` answers it; `now` in ms, for the lines' times. */
export function answerWhy(
  request: LeaseRequestObject,
  workers: readonly WorkerObject[],
  leases: readonly LeaseObject[],
  now: number,
): WhyAnswer {
  const names = new Set(reasonsByWorker(request.status).map((entry) => entry.worker));
  return answerWhyOf(request, workers, heldLeases(leases, names), now);
}

/** answerWhy over held leases already read (the console keeps its own rows of Leases). */
export function answerWhyOf(
  request: WhyRequest,
  workers: readonly WorkerObject[],
  leases: readonly HeldLease[],
  now: number,
): WhyAnswer {
  const phase = request.status?.phase ?? 'Pending';
  const base = { namespace: request.metadata.namespace ?? '', name: request.metadata.name, phase };
  if (phase !== 'Waiting') {
    return { ...base, lines: [`it is ${phase}, not waiting: there is nothing to unblock`] };
  }
  const views = whyViews(request, workers);
  if (views.length === 0 && (request.status?.workers?.length ?? 0) > 0) {
    // The Workers the controller knows could not be read (a person without list on workers):
    // "nothing helps" would be a guess.
    return { ...base, lines: ['cannot tell what would unblock it: its workers could not be read'] };
  }
  const verdict = findUnblocks({ request: deviceSpecOf(request), views, leases });
  return { ...base, verdict, lines: unblockLines(verdict, now) };
}
