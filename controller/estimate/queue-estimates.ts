// The estimates of one walk: for each waiting request in queue order, the competitors ahead of it
// (waiting requests of its device class), the leases on the workers that are full or busy for it,
// and its class's history, given to the pure estimator. Pure: the walk's reasons and the granted
// leases in, an estimate per request out. A new estimate replaces the one a request shows only when
// it says something else (settle): the status is written when it changes (ADR 0017), and an
// estimate that moves by a second at every walk would be a write per request per walk.
import { PLATFORM_NAMES, type DeviceSpec, type WorkerReason } from '../../api/index.js';
import {
  estimateGrant,
  historyMedians,
  type ClassHistory,
  type Estimate,
  type HistoryMedians,
  type LeaseEnds,
} from './estimate.js';

export interface WaitingForEstimate {
  key: string;
  spec: DeviceSpec;
  queuedAt: number;
  /** Its reasons from this walk; requests of one spec share one list (walk.ts). */
  workers: readonly WorkerReason[];
}

export interface HeldLease {
  worker: string;
  spec: DeviceSpec;
  expiresAt: number;
  session: boolean;
}

/** The device class requests compete in, and whose history they share. */
export function classKey(spec: DeviceSpec): string {
  const kind = spec.physical === true ? 'physical' : 'virtual';
  return `${spec.platform}/${kind}/${spec.model?.toLowerCase() ?? spec.class ?? 'phone'}`;
}

/** The class as people read it: "iPhone 16", "iOS phone". */
export function classLabel(spec: DeviceSpec): string {
  return spec.model ?? `${PLATFORM_NAMES[spec.platform]} ${spec.class ?? 'phone'}`;
}

/** A worker whose lease ending could let the request run there. */
function capacityBlocked(entry: WorkerReason): boolean {
  return (
    (entry.reason === 'full' && entry.capacityReason !== 'disk-low') ||
    entry.reason === 'busy' ||
    entry.reason === 'no-free-physical' ||
    entry.reason === 'not-chosen'
  );
}

/** A held lease with its class and its worker's number, worked out once a walk. */
interface ClassedLease {
  lease: HeldLease;
  classKey: string;
  worker: number;
}

/** A lease whose end frees what the request needs: its physical device, or a running slot. */
function frees(held: ClassedLease, spec: DeviceSpec, key: string): boolean {
  const { lease } = held;
  if (lease.spec.platform !== spec.platform) return false;
  return spec.physical === true
    ? lease.spec.physical === true && held.classKey === key
    : lease.spec.physical !== true;
}

/** The leases a request's class can wait for on its reasons' workers. */
interface Gathered {
  ends: LeaseEnds;
  blocked: number;
  label: string;
  leaseNoun: { one: string; many: string };
}

/**
 * The ends of the leases among `freeing` (sorted by expiry) whose worker is marked in `on`: read
 * off the sorted list, not gathered and sorted again per list of reasons. Sorting per request was
 * a third of the controller's CPU at 5000 requests over 1000 workers, most with a list of their own.
 */
function endsAmong(freeing: readonly ClassedLease[], on: Uint8Array, key: string) {
  const inOrder: HeldLease[] = [];
  let sessions = 0;
  let sameClass = true;
  for (const held of freeing)
    if (on[held.worker] === 1) {
      inOrder.push(held.lease);
      if (held.lease.session) sessions++;
      sameClass &&= held.classKey === key;
    }
  return { ends: { inOrder, sessions }, sameClass };
}

export function estimateQueue(
  waiting: readonly WaitingForEstimate[],
  leases: readonly HeldLease[],
  historyOf: (classKey: string) => ClassHistory,
  now: number,
): Map<string, Estimate> {
  // Once a walk: each lease's class and worker number, each class's freeing leases in the order
  // they end, each class's medians.
  const workerNumbers = new Map<string, number>();
  const classed = leases.map((lease): ClassedLease => {
    let worker = workerNumbers.get(lease.worker);
    if (worker === undefined) workerNumbers.set(lease.worker, (worker = workerNumbers.size));
    return { lease, classKey: classKey(lease.spec), worker };
  });
  const freeingOf = new Map<string, ClassedLease[]>();
  const freeing = (spec: DeviceSpec, key: string): ClassedLease[] => {
    let list = freeingOf.get(key);
    if (!list) {
      list = classed.filter((held) => frees(held, spec, key));
      list.sort((a, b) => a.lease.expiresAt - b.lease.expiresAt);
      freeingOf.set(key, list);
    }
    return list;
  };
  const histories = new Map<string, HistoryMedians>();
  // Requests of one spec share their reasons: their leases are gathered once. A request with a
  // list of its own (something remembered of its own) mostly has the same workers full as others
  // of its class: their leases are gathered once too, by the set of those workers.
  const gathered = new Map<readonly WorkerReason[], Map<string, Gathered>>();
  const gatheredBySet = new Map<string, Gathered>();
  const text = new TextDecoder('latin1');
  const aheadIn = new Map<string, number>();
  const estimates = new Map<string, Estimate>();

  for (const request of waiting) {
    const key = classKey(request.spec);
    const ahead = aheadIn.get(key) ?? 0;
    aheadIn.set(key, ahead + 1);
    let byClass = gathered.get(request.workers);
    if (!byClass) gathered.set(request.workers, (byClass = new Map<string, Gathered>()));
    let found = byClass.get(key);
    if (!found) {
      // The workers full or busy for it, marked by number: kept with its ends (a byte a worker).
      const on = new Uint8Array(workerNumbers.size);
      let blocked = 0;
      for (const entry of request.workers) {
        if (!capacityBlocked(entry)) continue;
        blocked++;
        const worker = workerNumbers.get(entry.worker);
        if (worker !== undefined) on[worker] = 1;
      }
      const set = `${key}\n${blocked}\n${text.decode(on)}`;
      found = gatheredBySet.get(set);
      if (!found) {
        const { ends, sameClass } = endsAmong(freeing(request.spec, key), on, key);
        const label = classLabel(request.spec);
        const platform = PLATFORM_NAMES[request.spec.platform];
        const leaseNoun = sameClass
          ? { one: `lease of ${label}`, many: `leases of ${label}` }
          : { one: `${platform} lease`, many: `${platform} leases` };
        gatheredBySet.set(set, (found = { ends, blocked, label, leaseNoun }));
      }
      byClass.set(key, found);
    }
    let history = histories.get(key);
    if (!history) histories.set(key, (history = historyMedians(historyOf(key))));
    estimates.set(
      request.key,
      estimateGrant({
        now,
        queuedAt: request.queuedAt,
        label: found.label,
        leaseNoun: found.leaseNoun,
        ahead,
        ends: found.ends,
        capacityBlocked: found.blocked,
        history,
      }),
    );
  }
  return estimates;
}

/**
 * The estimate to show: the one shown until the new one says something else (another basis, or
 * a moment more than 5 s or a tenth of the wait left away), so that a walk writes nothing new for
 * an estimate that only wobbled. Moments are whole seconds, rounded up.
 */
export function settle(shown: Estimate | undefined, next: Estimate, now: number): Estimate {
  const rounded: Estimate =
    next.at === undefined
      ? { basis: next.basis }
      : { at: Math.ceil(next.at / 1000) * 1000, basis: next.basis };
  if (shown?.basis !== rounded.basis) return rounded;
  if (shown.at === undefined || rounded.at === undefined)
    return shown.at === rounded.at ? shown : rounded;
  const tolerance = Math.max(5000, (rounded.at - now) / 10);
  return Math.abs(shown.at - rounded.at) <= tolerance ? shown : rounded;
}
