// A waiting request's reasons, one per worker, as the controller holds them and as status.workers
// carries them: grouped by reason (ADR 0033), or an item per worker as an older controller wrote.
import type { WorkerReason, WorkerReasonItem } from './schemas.js';
import { CAPACITY_REASONS, WAITING_REASONS } from './reasons.js';

const REASON_RANK = new Map<string, number>(
  WAITING_REASONS.map((reason, index) => [reason, index]),
);
const CAPACITY_RANK = new Map<string, number>(
  CAPACITY_REASONS.map((reason, index) => [reason, index]),
);

/** Names in the order the controller lists workers (code units, as its fleet cache sorts). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The items of status.workers for one reason per worker: an item for each reason and capacity
 * reason that some worker has, in the reasons' contract order (as `summarizeReasons` counts
 * them), then the capacity reason's (none first); each item's names in name order.
 */
export function groupReasons(reasons: readonly WorkerReason[]): WorkerReasonItem[] {
  const items = new Map<string, WorkerReasonItem & { names: string[] }>();
  for (const { worker, reason, capacityReason } of reasons) {
    const key = capacityReason === undefined ? reason : `${reason} ${capacityReason}`;
    const item = items.get(key);
    if (item) item.names.push(worker);
    else
      items.set(key, {
        reason,
        ...(capacityReason !== undefined ? { capacityReason } : {}),
        names: [worker],
      });
  }
  const rank = (item: WorkerReasonItem) =>
    (REASON_RANK.get(item.reason) ?? 0) * (CAPACITY_REASONS.length + 1) +
    (item.capacityReason === undefined ? 0 : (CAPACITY_RANK.get(item.capacityReason) ?? 0) + 1);
  const sorted = [...items.values()].sort((a, b) => rank(a) - rank(b));
  for (const item of sorted) item.names.sort(byName);
  return sorted;
}

/**
 * One reason per worker from a status's workers, either form (grouped items, items of one
 * worker, both mixed), in worker name order; none when the status carries no reasons.
 */
export function reasonsByWorker(
  status: { workers?: readonly WorkerReasonItem[] | undefined } | undefined,
): WorkerReason[] {
  const reasons: WorkerReason[] = [];
  for (const { worker, names, reason, capacityReason } of status?.workers ?? []) {
    const carried = capacityReason !== undefined ? { capacityReason } : {};
    if (worker !== undefined) reasons.push({ worker, reason, ...carried });
    for (const name of names ?? []) reasons.push({ worker: name, reason, ...carried });
  }
  return reasons.sort((a, b) => byName(a.worker, b.worker));
}
