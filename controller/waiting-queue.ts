// The waiting queue: the requests in queue order (queuedAt, then creation), and one walk over those that
// wait (walk.ts decides, purely): a dispatch or a failure goes to the request machine, a request
// that still waits gets its reasons, its position and its estimate (estimate/).
import type { WorkerReason } from '../api/index.js';
import {
  estimateQueue,
  settle,
  type Estimate,
  type GrantHistory,
  type HeldLease,
} from './estimate/index.js';
import type { ControllerMetrics } from './metrics.js';
import { grantOf } from './request-life.js';
import type { RoutingPolicy } from '../api/index.js';
import type { TrackedRequest } from './tracked-request.js';
import { walk, type Fleet, type WaitingRequest, type WalkOutcome } from './walk.js';

export interface WalkHandlers {
  /** A dispatch or a failure: an event for the request's machine. */
  decided: (request: TrackedRequest, outcome: Exclude<WalkOutcome, { kind: 'wait' }>) => void;
  /** The request's reasons or position changed: write them when due. */
  waits: (request: TrackedRequest) => void;
}

/** What the estimates read besides the queue: the last hour of grants, and the time. */
export interface QueueEstimator {
  history: GrantHistory;
  now: () => number;
}

/**
 * Queue order: first queued first. Requests queued in one pass share a queuedAt: they keep the
 * order they were created in, and within one second of creation (creationTimestamp's precision)
 * the order this process saw them, which is the order of the map the sort is given (the sort is
 * stable). Breaking that tie by name put a request named "after" ahead of an earlier "next".
 */
export function queueOrder(
  a: Pick<TrackedRequest, 'queuedAt' | 'createdAt'>,
  b: Pick<TrackedRequest, 'queuedAt' | 'createdAt'>,
): number {
  return (a.queuedAt ?? 0) - (b.queuedAt ?? 0) || a.createdAt - b.createdAt;
}

export class WaitingQueue {
  /** Every tracked request in queue order; undefined: to be sorted again. */
  private order: TrackedRequest[] | undefined;

  constructor(
    private readonly metrics: ControllerMetrics,
    private readonly policy: RoutingPolicy,
    private readonly estimator?: QueueEstimator,
  ) {}

  /** A request came, went, or was queued: sort again at the next walk. */
  changed(): void {
    this.order = undefined;
  }

  walk(requests: ReadonlyMap<string, TrackedRequest>, fleet: Fleet, handlers: WalkHandlers): void {
    const started = performance.now();
    // Sorting thousands of requests on every walk was most of a walk's time in a burst; the order
    // changes only when a request comes, goes, or is queued.
    this.order ??= [...requests.values()].sort(queueOrder);
    const queue = this.order.filter(
      (request) => request.life.kind === 'waiting' || request.life.kind === 'withdrawing',
    );
    const waiting: WaitingRequest[] = queue.map((request) => ({
      key: request.key,
      spec: request.spec,
      memos: request.memos,
      holdDispatch: request.life.kind === 'withdrawing',
      lastCannotServe: request.lastCannotServe,
    }));
    const outcomes = walk(waiting, fleet, this.policy);
    this.metrics.walks.inc();
    this.metrics.walkSeconds.observe((performance.now() - started) / 1000);

    // Apply in queue order: dispatches and failures leave the queue; the rest get their reasons
    // and their new position. Requests of one spec share one list of reasons (walk.ts), so each
    // list is counted and compared once, not once per request: thousands of requests × a reason
    // per worker was most of a walk's time at 5000 requests over 1000 workers.
    const estimates = this.estimates(requests, queue, outcomes);
    let position = 0;
    const sharing = new Map<readonly WorkerReason[], number>();
    const same = new SameReasons();
    for (const request of queue) {
      const outcome = outcomes.get(request.key);
      if (!outcome) continue;
      if (outcome.kind !== 'wait') {
        handlers.decided(request, outcome);
        continue;
      }
      position++;
      sharing.set(outcome.workers, (sharing.get(outcome.workers) ?? 0) + 1);
      const estimate = estimates.get(request.key) ?? request.estimate;
      // Most waiting requests come out of a walk as they went in: skip them cheaply, without
      // building their status to compare it.
      if (
        request.position === position &&
        request.estimate === estimate &&
        same.equal(request.workers, outcome.workers)
      )
        continue;
      request.workers = outcome.workers;
      request.position = position;
      request.estimate = estimate;
      handlers.waits(request);
    }
    this.metrics.queueLength.set(position);
    this.metrics.waitingByReason.reset();
    for (const [reason, count] of reasonCounts(sharing))
      this.metrics.waitingByReason.set({ reason }, count);
  }

  /**
   * Each waiting request's estimate after this walk: the one it shows while the new one only
   * wobbles (settle), so an unchanged estimate is the same object and writes nothing.
   */
  private estimates(
    requests: ReadonlyMap<string, TrackedRequest>,
    queue: readonly TrackedRequest[],
    outcomes: ReadonlyMap<string, WalkOutcome>,
  ): Map<string, Estimate> {
    const settled = new Map<string, Estimate>();
    if (!this.estimator) return settled;
    const { history, now: clockNow } = this.estimator;
    const now = clockNow();
    const leases: HeldLease[] = [];
    for (const request of requests.values()) {
      // Held until it is gone: being deleted from a grant too.
      const grant = grantOf(request.life);
      if (grant?.worker && grant.expiresAt !== undefined)
        leases.push({
          worker: grant.worker,
          spec: request.spec,
          expiresAt: grant.expiresAt,
          session: request.spec.holderSession !== undefined,
        });
    }
    const waiting = [];
    for (const request of queue) {
      const outcome = outcomes.get(request.key);
      if (outcome?.kind === 'wait')
        waiting.push({
          key: request.key,
          spec: request.spec,
          queuedAt: request.queuedAt ?? request.createdAt,
          workers: outcome.workers,
        });
    }
    const estimates = estimateQueue(waiting, leases, (key) => history.of(key), now);
    for (const request of queue) {
      const next = estimates.get(request.key);
      if (next) settled.set(request.key, settle(request.estimate, next, now));
    }
    return settled;
  }
}

/** How many waiting requests give each reason, from each list and how many requests share it. */
export function reasonCounts(sharing: ReadonlyMap<readonly WorkerReason[], number>) {
  const counts = new Map<string, number>();
  for (const [workers, requests] of sharing)
    for (const entry of workers)
      counts.set(entry.reason, (counts.get(entry.reason) ?? 0) + requests);
  return counts;
}

/** Equal lists of reasons, each pair of lists compared once: many requests hold the same two. */
export class SameReasons {
  private readonly known = new Map<
    readonly WorkerReason[],
    Map<readonly WorkerReason[], boolean>
  >();

  equal(a: readonly WorkerReason[], b: readonly WorkerReason[]): boolean {
    if (a === b) return true;
    let answers = this.known.get(a);
    if (!answers) this.known.set(a, (answers = new Map<readonly WorkerReason[], boolean>()));
    let answer = answers.get(b);
    if (answer === undefined) answers.set(b, (answer = sameReasons(a, b)));
    return answer;
  }
}

function sameReasons(a: readonly WorkerReason[], b: readonly WorkerReason[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const [x, y] = [a[index], b[index]];
    if (
      x?.worker !== y?.worker ||
      x?.reason !== y?.reason ||
      x?.capacityReason !== y?.capacityReason
    )
      return false;
  }
  return true;
}
