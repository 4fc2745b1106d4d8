// A keyed work queue in the manner of client-go's workqueue, and the one home of every retry and
// timer in the controller and the agent:
//   - dedupe: a key added while it waits is there once;
//   - dirty while processing: a key added while its work runs is run once more after, never twice
//     at once;
//   - addAfter: the key is added when the delay has passed (the earliest of several asks wins;
//     a later wake finds its work by looking at the state, as a level-based reconcile does);
//   - addRateLimited: per-key exponential backoff, capped, with jitter, until forget(key);
//   - time is the injected Clock's, so tests move it by hand.
// The work for a key is `reconcile(key)`: it may answer { requeueAfterMs } to look again later;
// a throw is counted and retried with the key's backoff (controller-runtime's Result habit). As in
// client-go, the work says when a key has succeeded (forget), since a key's work may be several
// writes, made at several moments.
import { sleep, type Clock, type TimerHandle } from './clock.js';

export interface Backoff {
  /** The first retry's delay. */
  initialMs: number;
  /** No retry waits longer than this. */
  maxMs: number;
  /** Up to this fraction of a delay is taken off at random, so retries of many keys spread out. */
  jitter: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 10_000, jitter: 0.2 };

/** The delay of the `retries`-th retry (1 for the first). */
export function backoffDelay(backoff: Backoff, retries: number, random: () => number): number {
  const exponential = backoff.initialMs * 2 ** Math.max(0, retries - 1);
  const capped = Math.min(backoff.maxMs, exponential);
  return capped * (1 - backoff.jitter * random());
}

export type ReconcileResult = { requeueAfterMs?: number | undefined } | undefined | void;

/** Hooks for metrics (runtime/workqueue-metrics.ts makes them from Prometheus gauges). */
export interface WorkQueueObserver {
  depth?(queue: string, depth: number): void;
  retried?(queue: string): void;
  failed?(queue: string, error: unknown): void;
}

export interface WorkQueueOptions<K extends string> {
  /** Names the queue in metrics and logs. */
  name: string;
  clock: Clock;
  reconcile: (key: K) => ReconcileResult | Promise<ReconcileResult>;
  /** Keys worked on at once (each key only once at a time); 1 by default. */
  concurrency?: number;
  backoff?: Backoff;
  /** In [0, 1); Math.random by default (tests pass a fixed one). */
  random?: () => number;
  observer?: WorkQueueObserver | undefined;
  /**
   * Runs a drain soon. setImmediate by default: every add in one turn of the event loop is seen by
   * one drain, so a burst of informer events costs one pass (tests: a synchronous or fake one).
   */
  defer?: (run: () => void) => void;
}

export class WorkQueue<K extends string = string> {
  /** Keys ready to work on, in the order they came; each at most once. */
  private readonly ready: K[] = [];
  private readonly readySet = new Set<K>();
  private readonly processing = new Set<K>();
  /** Keys added while processing: ready again once their work is done. */
  private readonly dirty = new Set<K>();
  private readonly waiting = new Map<K, { at: number; timer: TimerHandle }>();
  private readonly failures = new Map<K, number>();
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly defer: (run: () => void) => void;
  private drainScheduled = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: WorkQueueOptions<K>) {
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.random = options.random ?? Math.random;
    this.concurrency = options.concurrency ?? 1;
    this.defer = options.defer ?? ((run) => setImmediate(run));
    if (!(this.concurrency >= 1)) throw new Error('concurrency must be at least 1');
  }

  /** Keys ready and not yet taken (the depth metric). */
  get depth(): number {
    return this.ready.length;
  }

  /** Keys waiting for a delay to pass. */
  get delayed(): number {
    return this.waiting.size;
  }

  add(key: K): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.readySet.has(key)) return;
    this.readySet.add(key);
    this.ready.push(key);
    this.observeDepth();
    this.scheduleDrain();
  }

  /** Adds the key once `delayMs` has passed; an earlier ask for the same key wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.stopped) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const at = this.options.clock.now() + delayMs;
    const known = this.waiting.get(key);
    if (known && known.at <= at) return;
    if (known) this.options.clock.clearTimeout(known.timer);
    const timer = this.options.clock.setTimeout(() => {
      if (this.waiting.get(key)?.timer !== timer) return;
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.waiting.set(key, { at, timer });
  }

  /** Adds the key after its backoff: each call without a forget() in between waits longer. */
  addRateLimited(key: K): void {
    if (this.stopped) return;
    const retries = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, retries);
    this.options.observer?.retried?.(this.options.name);
    this.addAfter(key, backoffDelay(this.backoff, retries, this.random));
  }

  /** A failure outside `reconcile` (a write that failed): counted, and the key retried. */
  requeueAfterFailure(key: K, error: unknown): void {
    this.options.observer?.failed?.(this.options.name, error);
    this.addRateLimited(key);
  }

  /** The key's retries since it last succeeded (client-go's NumRequeues). */
  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** The key's work succeeded: its next retry starts from the first delay again. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** Drops the key's delayed add and its backoff (the object is gone). */
  remove(key: K): void {
    const known = this.waiting.get(key);
    if (known) this.options.clock.clearTimeout(known.timer);
    this.waiting.delete(key);
    this.failures.delete(key);
  }

  /** Stops taking work and cancels every delay; resolves once the work in hand is done. */
  async shutDown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.waiting.values()) this.options.clock.clearTimeout(timer);
    this.waiting.clear();
    this.ready.length = 0;
    this.readySet.clear();
    this.dirty.clear();
    await this.idle();
  }

  /** Resolves when nothing is ready or being worked on (delayed keys do not count). */
  idle(): Promise<void> {
    if (this.processing.size === 0 && (this.ready.length === 0 || this.stopped))
      return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    this.defer(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (!this.stopped && this.processing.size < this.concurrency && this.ready.length > 0) {
      const key = this.ready.shift() as K;
      this.readySet.delete(key);
      this.processing.add(key);
      this.observeDepth();
      void this.work(key);
    }
    this.notifyIdle();
  }

  private async work(key: K): Promise<void> {
    try {
      const result = await this.options.reconcile(key);
      const after = result?.requeueAfterMs;
      if (after !== undefined) this.addAfter(key, after);
    } catch (error) {
      this.requeueAfterFailure(key, error);
    } finally {
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.drain();
    }
  }

  private notifyIdle(): void {
    if (this.processing.size > 0 || (this.ready.length > 0 && !this.stopped)) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private observeDepth(): void {
    this.options.observer?.depth?.(this.options.name, this.ready.length);
  }
}

/**
 * Runs `operation` until it succeeds, waiting out the backoff between tries, for a one-off step
 * with no key to queue (an agent registering its Worker at start). An error `retryable` does not
 * accept, or the last try's, is thrown.
 */
export async function retryWithBackoff<T>(
  operation: () => Promise<T>,
  options: {
    clock: Clock;
    attempts: number;
    retryable: (error: unknown) => boolean;
    backoff?: Backoff;
    random?: () => number;
    onRetry?: (error: unknown, delayMs: number) => void;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= options.attempts || !options.retryable(error)) throw error;
      const delay = backoffDelay(
        options.backoff ?? DEFAULT_BACKOFF,
        attempt,
        options.random ?? Math.random,
      );
      options.onRetry?.(error, delay);
      await sleep(options.clock, delay);
    }
  }
}
