// The execs running on each lease, so that a lease that ends has its tools stopped before its
// device is reclaimed: otherwise the previous holder's tool goes on driving a device that is being
// erased, or already given to the next holder. The exec server tracks each exec here; the granter
// stops a lease's execs (exec.ts: SIGTERM to the process group, SIGKILL after a short grace) and
// waits for them to be gone before it erases or resets the device.
import { systemClock, type Clock, type TimerHandle } from '../runtime/index.js';
import { LEASE_END_GRACE_MS, type ExecStopReason } from './exec.js';

/** One exec as the exec server holds it. */
export interface TrackedExec {
  /** Aborted, with the LEASE_LOST message as its reason, when the lease ends. */
  readonly leaseEnded: AbortSignal;
  /** Call once the process is gone (exec.ts's onExited), and again at the end: only once counts. */
  readonly exited: () => void;
}

interface Entry {
  stop: AbortController;
  gone: Promise<void>;
  markGone: () => void;
}

/** How long a stop waits past the kill grace for a process to be gone, at most. */
const GONE_SLACK_MS = 1000;

export class RunningExecs {
  readonly #byLease = new Map<string, Set<Entry>>();
  readonly #clock: Clock;
  readonly #waitMs: number;

  constructor(options: { clock?: Clock; graceMs?: number } = {}) {
    this.#clock = options.clock ?? systemClock();
    this.#waitMs = (options.graceMs ?? LEASE_END_GRACE_MS) + GONE_SLACK_MS;
  }

  /** Registers an exec on a lease, before it starts. */
  track(leaseId: string): TrackedExec {
    let markGone = (): void => undefined;
    const gone = new Promise<void>((resolve) => (markGone = resolve));
    const entry: Entry = { stop: new AbortController(), gone, markGone };
    const entries = this.#byLease.get(leaseId) ?? new Set<Entry>();
    entries.add(entry);
    this.#byLease.set(leaseId, entries);
    return {
      leaseEnded: entry.stop.signal,
      exited: () => {
        entry.markGone();
        entries.delete(entry);
        if (entries.size === 0 && this.#byLease.get(leaseId) === entries)
          this.#byLease.delete(leaseId);
      },
    };
  }

  /** How many execs run on a lease now. */
  count(leaseId: string): number {
    return this.#byLease.get(leaseId)?.size ?? 0;
  }

  /**
   * Stops every exec of the lease, each ending with LEASE_LOST and `message` (or the code and
   * message of an ExecStopReason: UNAVAILABLE for a device that crashed under the lease); resolves
   * once all are gone, or after the kill grace and a second more (a process that outlives
   * SIGKILL's reach).
   */
  async stopLease(leaseId: string, message: string | ExecStopReason): Promise<void> {
    const entries = [...(this.#byLease.get(leaseId) ?? [])];
    if (entries.length === 0) return;
    for (const entry of entries) entry.stop.abort(message);
    let timer: TimerHandle | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = this.#clock.setTimeout(resolve, this.#waitMs);
    });
    await Promise.race([Promise.all(entries.map((entry) => entry.gone)), waited]);
    if (timer !== undefined) this.#clock.clearTimeout(timer);
  }
}
