// A request's timers and retries: its key in the request work queue (runtime/workqueue.ts). A timer
// is a moment in `request.timers`, the key added for it; a wake that finds nothing due does
// nothing, so a timer is cleared or moved by changing its entry. A failed write is kept in
// `request.retries` and made again after the key's backoff, never dropped. Built before everything
// that sets a timer or retries a write (the status writer, the event recorder, the request's
// writes, the shell), so each of those is built complete; the shell's `reconcile` runs what the
// key's wake finds due.
import type { Clock, WorkQueue } from '../runtime/index.js';
import type {
  RequestRetry,
  RequestTimer,
  RetriedWrite,
  TrackedRequest,
} from './tracked-request.js';

export class RequestTimers {
  constructor(
    /** The request work queue, keyed by namespace/name; its reconcile is the shell's. */
    private readonly queue: WorkQueue,
    private readonly clock: Clock,
  ) {}

  /** The request's `which` timer falls due at `at`; its key is added to the queue then. */
  set(request: TrackedRequest, which: RequestTimer, at: number): void {
    request.timers[which] = at;
    this.queue.addAfter(request.key, at - this.clock.now());
  }

  clear(request: TrackedRequest, which: RequestTimer): void {
    request.timers[which] = undefined;
  }

  clearAll(request: TrackedRequest): void {
    request.timers = {};
  }

  /** A write that failed: made again after the request's backoff (which grows until it works). */
  retry(request: TrackedRequest, which: RequestRetry, error: unknown, write: RetriedWrite): void {
    request.retries.set(which, write);
    this.queue.requeueAfterFailure(request.key, error);
  }

  /** A write worked: once nothing else is retried, the request's backoff starts over. */
  succeeded(request: TrackedRequest): void {
    if (request.retries.size === 0) this.queue.forget(request.key);
  }

  /** The timers that fell due by `now`, earliest first. */
  due(request: TrackedRequest, now: number): [RequestTimer, number][] {
    return (Object.entries(request.timers) as [RequestTimer, number | undefined][])
      .filter((entry): entry is [RequestTimer, number] => entry[1] !== undefined && entry[1] <= now)
      .sort((a, b) => a[1] - b[1]);
  }

  /** The writes to make again now, taken out of the request. */
  takeRetries(request: TrackedRequest): RetriedWrite[] {
    const retries = [...request.retries.values()];
    request.retries.clear();
    return retries;
  }

  /** When the key is to come up again for the timers still set (the work queue's answer). */
  nextWake(request: TrackedRequest, now: number): { requeueAfterMs: number } | undefined {
    const later = Object.values(request.timers).filter((at): at is number => at !== undefined);
    return later.length > 0 ? { requeueAfterMs: Math.max(1, Math.min(...later) - now) } : undefined;
  }

  /** The request is no longer tracked: no timer of it fires, its key leaves the queue. */
  forget(request: TrackedRequest): void {
    request.timers = {};
    this.queue.remove(request.key);
  }
}
