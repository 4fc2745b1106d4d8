// The status writer: applies the machine's status changes to a request's memory and writes the
// status when it changed (ADR 0004): an outcome (Granted, Failed, Released) at once, the way there
// (Waiting, its reasons and position, Dispatched) at most once per reason-write interval. Writes
// wait their turn in the write queue; a failed one is made again after the request's backoff.
// Each write is a PUT of the whole status onto the version last written or seen (ADR 0014); one
// that meets a newer version (the user or the garbage collector changed the request) reads the
// request again and is made onto that.
import {
  DEVICE_RECOVERING,
  EXPIRING_SOON_CONDITION,
  LIFETIME_REASONS,
  sameJson,
  type ErrorBody,
} from '../api/index.js';
import {
  isNotFound,
  writeStatusOnto,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
} from '../runtime/index.js';
import { classKey, type GrantHistory } from './estimate/index.js';
import type { ControllerMetrics } from './metrics.js';
import { leasePlaceOf } from './lease-object.js';
import { grantOf, grantedAtOf, shownWorkerOf, type RequestLife } from './request-life.js';
import type { StatusChange } from './request-machine.js';
import { copyCondition, desiredStatus, phaseShown, setCondition, writeLaneFor } from './status.js';
import type { RequestTimers } from './request-timers.js';
import type { TrackedRequest } from './tracked-request.js';
import type { WritePriority, WriteQueue } from './write-queue.js';

/** Conflicts a status write reads the request again for before it waits out the backoff. */
const CONFLICT_REREADS = 2;

export interface StatusWriterOptions {
  client: KubeClient;
  /** The request as the informer has it (its resourceVersion, before this process writes one). */
  lookup: (key: string) => KubeObject | undefined;
  writes: WriteQueue;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  reasonWriteIntervalMs: number;
  /**
   * A Dispatched status is held this long at most, until the dispatch is told (its agent answered:
   * `dispatchTold`), as the dispatch's Event is (ADR 0016, 0030); 0: the interval alone.
   */
  dispatchHoldMs?: number;
  /** The worker's label, for the Granted condition. */
  labelOf: (worker: string) => string | undefined;
  /** False once the request is forgotten or being deleted: nothing more is written. */
  writable: (request: TrackedRequest) => boolean;
  /** The held status's `write` timer; a failed write retried after the request's backoff. */
  timers: RequestTimers;
  /** queuedAt moved: the queue must be sorted again. */
  requeued: () => void;
  /** A write made it to the server; `before`: the status it replaced there (usage.ts). */
  written?: (
    request: TrackedRequest,
    before: Record<string, unknown> | undefined,
    after: Record<string, unknown>,
  ) => void;
  /** Where grants and releases are remembered for the estimates (estimate/history.ts). */
  history?: GrantHistory | undefined;
}

export class StatusWriter {
  constructor(private readonly options: StatusWriterOptions) {}

  /**
   * Applies a change of the machine's to the request's status, and writes it when due. The phase,
   * the worker and the expiry are read from the machine's life (status.ts; the shell sets the life
   * before it carries out the step's effects, so every change of a step sees the life the step
   * ends in); the rest is the change's. `shown`: the life the status showed before this change
   * (the step's first change: the life before the step; a later one: the step's own).
   */
  change(request: TrackedRequest, change: StatusChange, shown: RequestLife): void {
    const now = this.options.clock.now();
    switch (change.kind) {
      case 'queued':
        if (phaseShown({ life: shown, written: request.written }) !== 'Waiting')
          request.settleUntil = now + this.options.reasonWriteIntervalMs;
        if (request.queuedAt === undefined) {
          // Its first sight, not now: admissions' writes come back in any order, and the queue is
          // first come, first served.
          request.queuedAt = request.seenAt;
          this.options.requeued();
        }
        request.stage = undefined;
        request.lease = undefined;
        request.progress = undefined;
        break;
      case 'dispatched':
        request.settleUntil =
          now + Math.max(this.options.reasonWriteIntervalMs, this.options.dispatchHoldMs ?? 0);
        request.stage = change.stage;
        request.progress = undefined;
        request.workers = [];
        request.position = undefined;
        request.estimate = undefined;
        request.dispatchedAt = now;
        break;
      case 'adopted':
        // Its progress stays as the status shows it: the machine compares the Lease's with it.
        request.workers = [];
        break;
      case 'granted': {
        // The dispatch's hold ends with the grant: a later change (ExpiringSoon, an extended
        // expiry) is written when due, not when the hold would have ended (up to the dispatch
        // timeout after the dispatch, past a short lease's warning).
        request.settleUntil = now;
        this.remember(request, now);
        const granted = grantOf(request.life);
        request.lease = granted ? leasePlaceOf(request, granted.worker) : undefined;
        request.device = change.device;
        request.progress = undefined;
        request.workers = [];
        request.position = undefined;
        const message = `${describeGrant(request)} on ${this.label(request)}`;
        request.conditions = setCondition(
          request.conditions,
          { type: 'Granted', status: 'True', reason: 'Granted', message },
          now,
        );
        this.options.metrics.grants.inc();
        break;
      }
      case 'failed':
      case 'timedOut': {
        const error = change.kind === 'failed' ? change.error : timeoutError(request);
        request.error = error;
        request.conditions = setCondition(
          request.conditions,
          { type: 'Failed', status: 'True', reason: camelCase(error.code), message: error.message },
          now,
        );
        this.options.metrics.failures.inc({ code: error.code });
        this.end(request);
        break;
      }
      case 'expiry': {
        const had = request.conditions.some((c) => c.type === EXPIRING_SOON_CONDITION);
        if (change.expiringSoon || had) {
          const at = new Date(change.expiresAt).toISOString();
          request.conditions = setCondition(
            request.conditions,
            change.expiringSoon
              ? {
                  type: EXPIRING_SOON_CONDITION,
                  status: 'True',
                  reason: LIFETIME_REASONS.expiringSoon,
                  message: `the lease expires at ${at}`,
                }
              : {
                  type: EXPIRING_SOON_CONDITION,
                  status: 'False',
                  reason: LIFETIME_REASONS.extended,
                  message: `extended to ${at}`,
                },
            now,
          );
        }
        break;
      }
      case 'progress':
        // A change of stage (or of its estimate) is written as the way there is: in the progress
        // lane, with a Dispatched status not yet written (status.ts, writeLaneFor).
        request.progress = change.progress;
        break;
      case 'recovery':
        // As the Lease says it (device-recovery.ts), shown while Granted (status.ts).
        request.recovery = change.facts.recovery;
        request.conditions = copyCondition(
          request.conditions,
          DEVICE_RECOVERING,
          change.facts.condition,
        );
        break;
      case 'released': {
        // Only a life ended from a grant this process saw keeps its time, and it is released once.
        const grantedAt = grantedAtOf(request.life);
        if (grantedAt !== undefined)
          this.options.history?.record(classKey(request.spec), 'leaseMs', now - grantedAt);
        request.releasedBecause = change.message;
        request.releasedReason = change.reason;
        // A device still recovering when the lease ended (its Lease Lost past the crash budget)
        // is not booted again for this request any more; a lease Lost after its device was back
        // (the crash that used up the budget) says so too, not the earlier "booted again".
        if (
          request.conditions.some(
            (c) =>
              c.type === DEVICE_RECOVERING && (c.status === 'True' || change.reason === 'Lost'),
          )
        )
          request.conditions = setCondition(
            request.conditions,
            {
              type: DEVICE_RECOVERING,
              status: 'False',
              reason: change.reason,
              message: change.message,
            },
            now,
          );
        request.conditions = setCondition(
          request.conditions,
          { type: 'Granted', status: 'False', reason: change.reason, message: change.message },
          now,
        );
        this.end(request);
        break;
      }
    }
    this.flush(request);
  }

  /**
   * The dispatch's Event is held until its agent answers (ADR 0016): its Dispatched status is held
   * as long, until `until` at most, so that a grant within it is one status write (ADR 0030). A
   * Dispatched status written already holds nothing.
   */
  holdDispatched(request: TrackedRequest, until: number): void {
    if (phaseShown(request) !== 'Dispatched' || request.written?.phase === 'Dispatched') return;
    request.settleUntil = Math.max(request.settleUntil, until);
  }

  /** The held dispatch was told (its agent answered, or the hold ended): written as ADR 0004 has it. */
  dispatchTold(request: TrackedRequest): void {
    if (phaseShown(request) !== 'Dispatched') return;
    const dispatchedAt = request.dispatchedAt ?? this.options.clock.now();
    request.settleUntil = dispatchedAt + this.options.reasonWriteIntervalMs;
    this.options.timers.clear(request, 'write');
    this.flush(request);
  }

  /** A grant's wait and its dispatch's time to a device, for the estimates of its class. */
  private remember(request: TrackedRequest, now: number): void {
    const history = this.options.history;
    if (!history) return;
    const key = classKey(request.spec);
    if (request.queuedAt !== undefined) history.record(key, 'waitMs', now - request.queuedAt);
    if (request.dispatchedAt !== undefined)
      history.record(key, 'readyMs', now - request.dispatchedAt);
  }

  /** The worker's label (or name) a request is granted on, for conditions and Events. */
  label(request: TrackedRequest): string {
    const worker = shownWorkerOf(request.life) ?? '';
    return this.options.labelOf(worker) ?? worker;
  }

  /**
   * Writes the status if it changed: an outcome at once; a change of which workers are away at
   * once too, ahead of position updates (status.ts, presencePart); the rest once it is due.
   */
  flush(request: TrackedRequest): void {
    if (!this.options.writable(request)) return;
    const next = desiredStatus(request) as Record<string, unknown>;
    if (request.written && sameJson(request.written, next)) return;
    const priority: WritePriority = writeLaneFor(request.written, next);
    const now = this.options.clock.now();
    const dueAt = Math.max(
      request.lastReasonWriteAt + this.options.reasonWriteIntervalMs,
      request.settleUntil,
    );
    if (priority === 'progress' && now < dueAt) {
      // A wait that got shorter (a held Dispatched status the request left) moves its timer.
      const at = request.timers.write;
      if (at === undefined || at > dueAt) this.options.timers.set(request, 'write', dueAt);
      return;
    }
    this.options.timers.clear(request, 'write');
    this.options.writes.schedule(request.key, priority, () => this.write(request));
  }

  private end(request: TrackedRequest): void {
    request.workers = [];
    request.position = undefined;
    request.progress = undefined;
    request.recovery = undefined;
    request.estimate = undefined;
  }

  /** Writes the request's status as it is when the write's turn comes (see write-queue.ts). */
  private async write(request: TrackedRequest): Promise<void> {
    // A turn may come at once, inside the step whose first change asked for it: the status is read
    // once that step has made all its changes (a grant and its expiry are one write, not two).
    await Promise.resolve();
    if (!this.options.writable(request)) return;
    const next = desiredStatus(request) as Record<string, unknown>;
    if (request.written && sameJson(request.written, next)) return;
    try {
      if (await this.replace(request, next)) {
        this.options.written?.(request, request.written, next);
        request.written = next;
        if (next.workers !== undefined) request.lastReasonWriteAt = this.options.clock.now();
        this.options.metrics.statusWrites.inc();
      }
      this.options.timers.succeeded(request);
    } catch (error) {
      if (isNotFound(error)) return;
      this.options.log.warn('status write failed; retrying', { request: request.key, error });
      this.options.timers.retry(request, 'write', error, () => {
        this.flush(request);
        return Promise.resolve(undefined);
      });
    }
  }

  /**
   * PUTs `next` as the request's status onto the version this process last wrote, or else the
   * informer's (ADR 0014); after a 409 the request is read again. False if it needed no write.
   */
  private async replace(request: TrackedRequest, next: Record<string, unknown>): Promise<boolean> {
    const outcome = await writeStatusOnto({
      client: this.options.client,
      target: { resource: 'leaseRequest', namespace: request.namespace, name: request.name },
      version: request.writtenVersion ?? this.options.lookup(request.key)?.metadata.resourceVersion,
      status: next,
      rereads: CONFLICT_REREADS,
      upToDate: (found) => found !== undefined && sameJson(found, next),
    });
    request.writtenVersion = outcome.version;
    if (outcome.found !== undefined) request.written = outcome.found;
    return outcome.written;
  }
}

/** The granted device, as conditions and Events name it. */
export function describeGrant(request: TrackedRequest): string {
  const device = request.device;
  return device ? `${device.name} ${device.id}${device.physical ? ' (physical)' : ''}` : 'a device';
}

function timeoutError(request: TrackedRequest): ErrorBody {
  const waited = request.spec.waitTimeoutSeconds;
  const reasons =
    request.workers.length > 0 ? `last reasons: ${summaryOf(request)}` : 'no known workers';
  return { code: 'TIMEOUT', message: `no worker could take it within ${waited}s (${reasons})` };
}

function summaryOf(request: TrackedRequest): string {
  const counts = new Map<string, number>();
  for (const entry of request.workers)
    counts.set(entry.reason, (counts.get(entry.reason) ?? 0) + 1);
  return [...counts].map(([reason, count]) => `${count} ${reason}`).join(', ');
}

function camelCase(code: string): string {
  return code
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
