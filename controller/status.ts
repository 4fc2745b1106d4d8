// The status a request should have, from the controller's memory of it: its phase, its worker and
// its expiry read from its life (request-life.ts), the rest from what the walks, the writes and its
// Lease told (RequestState). Per-worker reasons carry no timestamps, so a walk that changes nothing
// produces the same status, and writes nothing.
import {
  DEVICE_RECOVERING,
  groupReasons,
  summarizeReasons,
  type Condition,
  type DeviceRecovery,
  type ErrorBody,
  type GrantProgress,
  type GrantedDevice,
  type LeaseRequestStatus,
  type RequestPhase,
  type WorkerReason,
  type WorkerReasonItem,
} from '../api/index.js';
import type { Estimate } from './estimate/index.js';
import { grantOf, phaseOf, shownWorkerOf, type RequestLife } from './request-life.js';

export interface RequestState {
  /** Its life (request-machine.ts): the phase, the worker and the expiry its status shows. */
  life: RequestLife;
  /** The status last known to be on the server (on first sight: the one it was found with). */
  written?: Record<string, unknown> | undefined;
  generation?: number | undefined;
  queuedAt?: number | undefined;
  position?: number | undefined;
  /** While Waiting: when it should be granted, as last settled (estimate/queue-estimates.ts). */
  estimate?: Estimate | undefined;
  /** Possibly shared with other requests of a walk (walk.ts): read, never changed. */
  workers: readonly WorkerReason[];
  /** Where its Lease is, once granted: its worker's namespace, its UID (ADR 0034). */
  lease?: { namespace: string; name: string } | undefined;
  device?: GrantedDevice | undefined;
  /** While Dispatched: the agent's progress making or booting the device, from its Lease. */
  progress?: GrantProgress | undefined;
  /** While Granted: the device crashed and is booted again, from its Lease. */
  recovery?: DeviceRecovery | undefined;
  error?: ErrorBody | undefined;
  conditions: Condition[];
}

// A walk gives requests alike one list of reasons (walk.ts): grouped once per list, not per
// request (5000 requests over a thousand workers share a few lists). The items are shared too, by
// the statuses built from the list and those written: read, never changed.
const groupedLists = new WeakMap<readonly WorkerReason[], WorkerReasonItem[]>();

/** status.workers for a list of reasons: grouped by reason (ADR 0033), once per list. */
function groupedOnce(reasons: readonly WorkerReason[]): WorkerReasonItem[] {
  let items = groupedLists.get(reasons);
  if (items === undefined) groupedLists.set(reasons, (items = groupReasons(reasons)));
  return items;
}

/**
 * The phase a request's status shows: its life's; a life that says none (first sight) shows the
 * phase of the status it was found with.
 */
export function phaseShown(state: Pick<RequestState, 'life' | 'written'>): RequestPhase {
  return phaseOf(state.life) ?? (state.written?.phase as RequestPhase | undefined) ?? 'Pending';
}

export function desiredStatus(state: RequestState): LeaseRequestStatus {
  const phase = phaseShown(state);
  const worker = shownWorkerOf(state.life);
  const grant = grantOf(state.life);
  const expiresAt = grant?.expiresAt;
  const status: LeaseRequestStatus = { phase };
  if (state.queuedAt !== undefined) status.queuedAt = new Date(state.queuedAt).toISOString();
  if (phase === 'Waiting') {
    if (state.position !== undefined) status.position = state.position;
    status.workers = groupedOnce(state.workers);
    status.summary = summarizeReasons(state.workers);
    if (state.estimate !== undefined)
      status.estimate =
        state.estimate.at === undefined
          ? { basis: state.estimate.basis }
          : { grantAt: new Date(state.estimate.at).toISOString(), basis: state.estimate.basis };
  }
  if (worker !== undefined && phase !== 'Waiting') status.worker = worker;
  if (state.lease !== undefined) {
    status.lease = state.lease.name;
    status.leaseNamespace = state.lease.namespace;
  }
  if (state.device !== undefined) status.device = state.device;
  if (expiresAt !== undefined && phase === 'Granted') {
    status.expiresAt = new Date(expiresAt).toISOString();
    if (grant?.startedAt !== undefined)
      status.durationSeconds = Math.max(1, Math.round((expiresAt - grant.startedAt) / 1000));
  }
  // Only on the way to a grant: an outcome, or the queue again, never shows a stage left over.
  if (state.progress !== undefined && phase === 'Dispatched') status.progress = state.progress;
  // Only while the lease is held: a request released meanwhile (its Lease Lost) shows none.
  if (state.recovery !== undefined && phase === 'Granted') status.recovery = state.recovery;
  if (state.error !== undefined) status.error = state.error;
  if (state.conditions.length > 0) status.conditions = state.conditions;
  if (state.generation !== undefined) status.observedGeneration = state.generation;
  return status;
}

/** Sets a condition; its transition time moves only when its status flips. */
export function setCondition(
  conditions: Condition[],
  next: Omit<Condition, 'lastTransitionTime'>,
  now: number,
): Condition[] {
  const current = conditions.find((condition) => condition.type === next.type);
  const lastTransitionTime =
    current && current.status === next.status
      ? current.lastTransitionTime
      : new Date(now).toISOString();
  return [
    ...conditions.filter((condition) => condition.type !== next.type),
    { ...next, lastTransitionTime },
  ].sort((a, b) => a.type.localeCompare(b.type));
}

/**
 * Puts a condition copied from elsewhere (the Lease's DeviceRecovering) in place of the one of its
 * type, as it is there (its transition time included); none: takes that type off.
 */
export function copyCondition(
  conditions: Condition[],
  type: string,
  copied: Condition | undefined,
): Condition[] {
  const others = conditions.filter((condition) => condition.type !== type);
  if (copied === undefined) return others;
  return [...others, { ...copied, type }].sort((a, b) => a.type.localeCompare(b.type));
}

const OUTCOMES = new Set(['Granted', 'Failed', 'Released']);

/**
 * The part of a status whose change must be written at once (not coalesced): an outcome and what
 * comes with it. Pending, Waiting and Dispatched are all on the way to one; changes among them are
 * written with the reasons, at most once per reason-write interval, so that a request granted
 * within a moment is written once (Granted) rather than three times.
 */
export function urgentPart(status: Record<string, unknown> | undefined): string {
  const { phase, lease, device, error } = status ?? {};
  const outcome = typeof phase === 'string' && OUTCOMES.has(phase) ? phase : 'on the way';
  return JSON.stringify([outcome, lease, device, error]);
}

/**
 * The part of a waiting request's status that says which workers are away (reason
 * `disconnected`), or undefined when the status carries no reasons (not Waiting, or never written
 * Waiting). A change of it between two written Waiting statuses is written without waiting for the
 * reason-write interval, in a lane ahead of position updates (write-queue.ts): a worker that went
 * away (or came back) is what a person looking at a waiting request needs to see now. A request's
 * first reasons are not such a change, so a request granted within a moment is still written once.
 */
export function presencePart(status: Record<string, unknown> | undefined): string | undefined {
  const workers = status?.workers;
  if (!Array.isArray(workers)) return undefined;
  const away: string[] = [];
  // Either form of item (an older controller wrote one per worker); only the away ones read.
  for (const item of workers as WorkerReasonItem[]) {
    if (item.reason !== 'disconnected') continue;
    if (item.worker !== undefined) away.push(item.worker);
    if (item.names !== undefined) away.push(...item.names);
  }
  return away.sort().join(' ');
}

/** Both statuses carry reasons, and the workers they say are away differ. */
export function presenceChanged(
  written: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
): boolean {
  const before = presencePart(written);
  const after = presencePart(next);
  return before !== undefined && after !== undefined && before !== after;
}

/**
 * The part of a granted request's status that says whether its device is being booted again after
 * a crash, and since when: its holder acts on a change of it (stops driving the device, or starts
 * again), so it is written at once, in the presence lane, as a worker away is.
 */
export function recoveryPart(status: Record<string, unknown> | undefined): string {
  const recovery = status?.recovery as { since?: unknown } | undefined;
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as Condition[]) : [];
  const condition = conditions.find((c) => c.type === DEVICE_RECOVERING);
  return JSON.stringify([recovery?.since ?? null, condition?.status ?? null]);
}

/**
 * The write lane a changed status goes in (write-queue.ts): a change of its urgent part in the
 * outcome lane, at once, ahead of new dispatches (ADR 0036); a change of which workers are away,
 * or of its device's recovery, in the presence lane, at once too; anything else is progress,
 * written once the reason-write interval allows.
 */
export function writeLaneFor(
  written: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
): 'outcome' | 'presence' | 'progress' {
  if (urgentPart(written) !== urgentPart(next)) return 'outcome';
  if (presenceChanged(written, next)) return 'presence';
  return recoveryPart(written) !== recoveryPart(next) ? 'presence' : 'progress';
}
