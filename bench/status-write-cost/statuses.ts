// The statuses the benchmark writes, shaped as controller/status.ts shapes them: a waiting
// request's (phase Waiting, one reason per worker in worker name order, the summary, a position)
// and a granted one's (phase Granted, the lease, the device, the Granted condition, no workers).
// Under the grouped-workers variant a waiting status carries the same reasons grouped by reason
// (status.workerGroups, a form weighed in issue 36, not the contract) instead of status.workers.
import {
  CAPACITY_REASONS,
  WAITING_REASONS,
  groupReasons,
  summarizeReasons,
  type CapacityReason,
  type LeaseRequestStatus,
  type WaitingReason,
  type WorkerReason,
} from '../../api/index.js';

const QUEUED_AT = '2025-01-01T00:00:00.000Z';
const OTHER_REASONS = WAITING_REASONS.filter((reason) => reason !== 'full');

/** Worker names as a fleet has them, zero-padded so that name order is index order. */
export function workerName(index: number): string {
  return `mac-mini-${String(index).padStart(4, '0')}`;
}

/**
 * The reasons of `count` workers at a request's `write`-th status write. A quarter of the workers
 * are full with a capacity reason (as a busy fleet's are; those entries carry the field the
 * status rule guards); the rest spread over the other reasons. Between two writes one worker in
 * ten changes its reason, so every write changes the stored object, as a real reason write does.
 */
export function waitingWorkers(count: number, write: number): WorkerReason[] {
  return Array.from({ length: count }, (_, index) => {
    const moved = (index + write) % 10 === 0 ? write : 0;
    const slot = (index + moved) % 4;
    const worker = workerName(index);
    if (slot === 0) {
      const capacityReason = CAPACITY_REASONS[(index + moved) % CAPACITY_REASONS.length];
      return { worker, reason: 'full', ...(capacityReason ? { capacityReason } : {}) };
    }
    const reason: WaitingReason = OTHER_REASONS[(index + moved) % OTHER_REASONS.length] ?? 'busy';
    return { worker, reason };
  });
}

/** A waiting request's status with `workers` reasons, at its `write`-th write. */
export function waitingStatus(
  workers: number,
  write: number,
  position: number,
): LeaseRequestStatus {
  const entries = waitingWorkers(workers, write);
  return {
    phase: 'Waiting',
    queuedAt: QUEUED_AT,
    position,
    workers: entries,
    summary: summarizeReasons(entries),
    observedGeneration: 1,
  };
}

/** A waiting request's status with `workers` reasons as the controller writes it (ADR 0033). */
export function productWaitingStatus(workers: number): LeaseRequestStatus {
  const entries = waitingWorkers(workers, 0);
  return {
    phase: 'Waiting',
    queuedAt: QUEUED_AT,
    position: 0,
    workers: groupReasons(entries),
    summary: summarizeReasons(entries),
    observedGeneration: 1,
  };
}

/** The workers of one reason (and capacity reason), by name: an entry of status.workerGroups. */
export interface WorkerGroup {
  reason: WaitingReason;
  capacityReason?: CapacityReason;
  workers: string[];
}

/**
 * One reason per worker grouped by reason and capacity reason: the groups in the reasons'
 * contract order (WAITING_REASONS), then the capacity reasons' (none first); the names in the
 * order the entries gave them.
 */
export function groupWorkers(entries: readonly WorkerReason[]): WorkerGroup[] {
  const groups = new Map<string, WorkerGroup>();
  for (const { worker, reason, capacityReason } of entries) {
    const key = `${reason}\u0000${capacityReason ?? ''}`;
    const group = groups.get(key);
    if (group) group.workers.push(worker);
    else
      groups.set(key, { reason, ...(capacityReason ? { capacityReason } : {}), workers: [worker] });
  }
  const rank = (group: WorkerGroup) => [
    WAITING_REASONS.indexOf(group.reason),
    group.capacityReason === undefined ? -1 : CAPACITY_REASONS.indexOf(group.capacityReason),
  ];
  return [...groups.values()].sort((a, b) => {
    const [ra = 0, ca = 0] = rank(a);
    const [rb = 0, cb = 0] = rank(b);
    return ra - rb || ca - cb;
  });
}

/**
 * waitingStatus with the same reasons, summary, position and queuedAt, its workers grouped in
 * status.workerGroups and no status.workers.
 */
export function waitingGroupedStatus(
  workers: number,
  write: number,
  position: number,
): Omit<LeaseRequestStatus, 'workers'> & { workerGroups: WorkerGroup[] } {
  const { workers: _perWorker, ...rest } = waitingStatus(workers, write, position);
  return { ...rest, workerGroups: groupWorkers(waitingWorkers(workers, write)) };
}

/** The status of a request just granted on `worker`: its outcome write. */
export function grantedStatus(request: string, worker: string): LeaseRequestStatus {
  const device = {
    id: `6F1C2A9E-${request.padStart(4, '0').slice(-4)}-4B1D-9C3E-0A7B5D2E8F41`,
    name: 'simlock-iPhone-16-1',
    model: 'iPhone 16',
    platform: 'ios' as const,
    os: '18.4',
    class: 'phone' as const,
    physical: false,
  };
  return {
    phase: 'Granted',
    queuedAt: QUEUED_AT,
    worker,
    lease: request,
    device,
    expiresAt: '2025-01-01T01:00:05.000Z',
    conditions: [
      {
        type: 'Granted',
        status: 'True',
        reason: 'Granted',
        message: `${device.name} ${device.id} on ${worker}`,
        lastTransitionTime: '2025-01-01T00:00:05.000Z',
      },
    ],
    observedGeneration: 1,
  };
}

/**
 * A status the rule on status.workers items refuses (capacityReason without reason full), and the
 * zod schema too: the probe that tells whether the API server enforces that rule.
 */
export function statusTheItemRuleRefuses(): Record<string, unknown> {
  return {
    phase: 'Waiting',
    workers: [{ worker: workerName(0), reason: 'busy', capacityReason: 'ram-budget' }],
  };
}

/**
 * A status.workerGroups group with capacityReason but not reason full: what the rule on each
 * group refuses where the schema has workerGroups (elsewhere the field is pruned).
 */
export function statusTheGroupRuleRefuses(): Record<string, unknown> {
  return {
    phase: 'Waiting',
    workerGroups: [{ reason: 'busy', capacityReason: 'ram-budget', workers: [workerName(0)] }],
  };
}

/** A status naming one worker twice: a list-map keyed by worker refuses it, an atomic list not. */
export function statusWithAWorkerTwice(): Record<string, unknown> {
  return {
    phase: 'Waiting',
    workers: [
      { worker: workerName(0), reason: 'busy' },
      { worker: workerName(0), reason: 'drained' },
    ],
  };
}
