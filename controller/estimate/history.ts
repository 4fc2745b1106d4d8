// The last hour of one controller's grants and releases, per device class, in memory and bounded:
// how long leases lasted, how long requests waited, how long a dispatch took to be granted. What
// the estimate (estimate.ts) knows of a class beyond the leases it can see. A restarted or new
// leader starts with none: its estimates say "no basis" where they would have needed it.
import type { Clock } from '../../runtime/index.js';
import type { ClassHistory } from './estimate.js';

export const HISTORY_WINDOW_MS = 3_600_000;
/** Samples kept per class and kind: the newest, the rest dropped. */
export const HISTORY_SAMPLES = 200;
/** Classes kept: the least recently seen dropped first. */
export const HISTORY_CLASSES = 500;

type Kind = keyof ClassHistory;
type Samples = Record<Kind, { at: number; ms: number }[]>;

export class GrantHistory {
  private readonly classes = new Map<string, Samples>();

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  record(classKey: string, kind: Kind, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    let samples = this.classes.get(classKey);
    if (samples) this.classes.delete(classKey);
    else samples = { leaseMs: [], waitMs: [], readyMs: [] };
    this.classes.set(classKey, samples);
    const list = samples[kind];
    list.push({ at: this.clock.now(), ms });
    if (list.length > HISTORY_SAMPLES) list.splice(0, list.length - HISTORY_SAMPLES);
    if (this.classes.size > HISTORY_CLASSES) {
      const oldest = this.classes.keys().next().value;
      if (oldest !== undefined) this.classes.delete(oldest);
    }
  }

  /** The samples of the last hour. */
  of(classKey: string): ClassHistory {
    const samples = this.classes.get(classKey);
    const since = this.clock.now() - HISTORY_WINDOW_MS;
    const recent = (kind: Kind): number[] =>
      (samples?.[kind] ?? []).filter((sample) => sample.at > since).map((sample) => sample.ms);
    return { leaseMs: recent('leaseMs'), waitMs: recent('waitMs'), readyMs: recent('readyMs') };
  }
}
