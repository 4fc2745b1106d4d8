// The Lease work that falls due later: an answer's acknowledgement (status Pending), written once
// it is due, and writes about a Lease that failed, made again after the Lease's backoff (a work
// queue, runtime/workqueue.ts). Apart from agent.ts, which decides what to write about a Lease:
// this file only keeps those writes until their time comes.
import { WorkQueue, type Clock, type WorkQueueMetrics } from '../../runtime/index.js';

/** A write about a Lease that failed, made again after the Lease's backoff. */
export type LeaseRetry = 'look again' | 'mark expired' | 'mark lost' | 'device health';

export class LeaseQueue {
  readonly #clock: Clock;
  readonly #queue: WorkQueue;
  /** Answers in progress whose acknowledgement has not been written yet: when it falls due. */
  readonly #acknowledgements = new Map<string, { at: number; write: () => void }>();
  readonly #retries = new Map<string, Map<LeaseRetry, () => Promise<void>>>();

  constructor(clock: Clock, queueMetrics: WorkQueueMetrics | undefined) {
    this.#clock = clock;
    this.#queue = new WorkQueue({
      name: 'leases',
      clock,
      observer: queueMetrics?.observer('Lease'),
      concurrency: 16,
      reconcile: (key) => this.#reconcile(key),
    });
  }

  /** Writes the acknowledgement of `key` at `at`, unless cancelled first (the answer came). */
  acknowledgeAt(key: string, at: number, write: () => void): { cancel: () => void } {
    this.#acknowledgements.set(key, { at, write });
    this.#queue.addAfter(key, at - this.#clock.now());
    return { cancel: () => this.#acknowledgements.delete(key) };
  }

  /** Makes `write` again after the Lease's backoff (one pending write of each kind per Lease). */
  retry(key: string, which: LeaseRetry, error: unknown, write: () => Promise<void>): void {
    const retries = this.#retries.get(key) ?? new Map<LeaseRetry, () => Promise<void>>();
    retries.set(which, write);
    this.#retries.set(key, retries);
    this.#queue.requeueAfterFailure(key, error);
  }

  /** A write about the Lease went through: its backoff starts afresh. */
  forget(key: string): void {
    this.#queue.forget(key);
  }

  shutDown(): Promise<void> {
    return this.#queue.shutDown();
  }

  #reconcile(key: string): { requeueAfterMs: number } | undefined {
    const retries = this.#retries.get(key);
    this.#retries.delete(key);
    for (const write of retries?.values() ?? []) void write();
    const acknowledgement = this.#acknowledgements.get(key);
    if (!acknowledgement) return undefined;
    const now = this.#clock.now();
    if (acknowledgement.at > now) return { requeueAfterMs: acknowledgement.at - now };
    this.#acknowledgements.delete(key);
    acknowledgement.write();
    return undefined;
  }
}
