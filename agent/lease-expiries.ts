// When each lease ends: one timer per lease on the injected clock, set at the grant (a fleet
// Lease's expiresAt, a local lease's duration), set again when a Lease is extended, cleared when
// the lease is reclaimed first. Apart from core.ts, which decides what an expiry does (tell the
// Kubernetes side, reclaim the device): this file only keeps the times and their timers.
import type { Clock, TimerHandle } from '../runtime/index.js';

export class LeaseExpiries {
  readonly #clock: Clock;
  readonly #onExpired: (leaseId: string) => void;
  readonly #timers = new Map<string, TimerHandle>();
  readonly #expiresAt = new Map<string, number>();

  constructor(clock: Clock, onExpired: (leaseId: string) => void) {
    this.#clock = clock;
    this.#onExpired = onExpired;
  }

  /** The lease ends at `atMs` (replacing any end set before); `onExpired` runs then. */
  expireAt(leaseId: string, atMs: number): void {
    const previous = this.#timers.get(leaseId);
    if (previous !== undefined) this.#clock.clearTimeout(previous);
    this.#expiresAt.set(leaseId, atMs);
    const timer = this.#clock.setTimeout(
      () => {
        this.#timers.delete(leaseId);
        this.#expiresAt.delete(leaseId);
        this.#onExpired(leaseId);
      },
      Math.max(0, atMs - this.#clock.now()),
    );
    this.#timers.set(leaseId, timer);
  }

  /** A lease whose end moved: its timer is set again. Nothing for a lease without one. */
  extend(leaseId: string, atMs: number): void {
    if (!this.#timers.has(leaseId) || this.#expiresAt.get(leaseId) === atMs) return;
    this.expireAt(leaseId, atMs);
  }

  /** The lease ended otherwise (reclaimed): its timer will not run. */
  clear(leaseId: string): void {
    const timer = this.#timers.get(leaseId);
    if (timer !== undefined) this.#clock.clearTimeout(timer);
    this.#timers.delete(leaseId);
    this.#expiresAt.delete(leaseId);
  }

  /** The agent stops: no timer runs any more. */
  stop(): void {
    for (const timer of this.#timers.values()) this.#clock.clearTimeout(timer);
    this.#timers.clear();
  }
}
