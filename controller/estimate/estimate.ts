// When a waiting request may be granted, and how that was worked out (issue 37). Pure: the
// request's competitors ahead, the leases that could free a device for it with their known ends,
// and a short history of its device class, at a moment given by the caller's clock. No estimate is
// better than a wrong one: when nothing known bears on the wait, `at` is absent and the basis
// begins "no basis:".
import { formatDuration } from '../../api/index.js';

/** A granted lease on a worker that holds a device the request could use once it ends. */
export interface LeaseEnd {
  /** Its expiry (spec duration from the dispatch, moved on extend): it ends by then. */
  expiresAt: number;
  /** Held by a renewed holder session: it may end sooner, at a moment no one knows in advance. */
  session: boolean;
}

/**
 * The leases a request can wait for, in the order they end, and how many a session holds. The
 * walk's estimates (queue-estimates.ts) read them off the class's leases sorted once a walk.
 */
export interface LeaseEnds {
  /** Earliest expiry first. */
  inOrder: readonly LeaseEnd[];
  sessions: number;
}

/** The lease ends of a list in any order. */
export function leaseEnds(ends: readonly LeaseEnd[]): LeaseEnds {
  return {
    inOrder: [...ends].sort((a, b) => a.expiresAt - b.expiresAt),
    sessions: ends.filter((end) => end.session).length,
  };
}

/** What the last hour says of this device class (history.ts); each list may be empty. */
export interface ClassHistory {
  /** How long leases lasted, from grant to release. */
  leaseMs: readonly number[];
  /** How long requests waited, from queued to granted. */
  waitMs: readonly number[];
  /** How long a dispatch took to be granted (making and booting a device). */
  readyMs: readonly number[];
}

/**
 * The medians of a class's history, worked out once a walk for all its requests (each sorts its
 * samples); undefined where there are too few samples to say anything.
 */
export interface HistoryMedians {
  leaseMs: number | undefined;
  waitMs: number | undefined;
  readyMs: number | undefined;
  /** How many waits the wait median is of. */
  waits: number;
}

export function historyMedians(history: ClassHistory): HistoryMedians {
  return {
    leaseMs: median(history.leaseMs, MIN_SAMPLES.lease),
    waitMs: median(history.waitMs, MIN_SAMPLES.wait),
    readyMs: median(history.readyMs, MIN_SAMPLES.ready),
    waits: history.waitMs.length,
  };
}

export interface EstimateInput {
  now: number;
  queuedAt: number;
  /** The device class as people read it: "iPhone 16", "iOS phone". */
  label: string;
  /**
   * The leases it waits for as people read them, one and many: "lease of iPhone 16" when all are
   * of its class, else "iOS lease" (a running slot freed by another model). Default: of its class.
   */
  leaseNoun?: { one: string; many: string } | undefined;
  /** Waiting requests ahead of it in queue order that the same workers could serve. */
  ahead: number;
  /** Leases on the workers that are full or busy for it (the only ones whose end helps). */
  ends: LeaseEnds;
  /** Workers that would serve it but are full or busy now; 0: it waits for something else. */
  capacityBlocked: number;
  history: HistoryMedians;
}

export interface Estimate {
  at?: number | undefined;
  basis: string;
}

/** Fewer samples than these and a median says nothing. */
export const MIN_SAMPLES = { lease: 5, wait: 5, ready: 3 } as const;

export function estimateGrant(input: EstimateInput): Estimate {
  const { now, label, ahead, ends, history } = input;
  const behind = ahead > 0 ? `; ${ahead} ahead of you` : '';
  if (input.capacityBlocked === 0)
    return { basis: 'no basis: no worker that would serve it is busy; it waits for the fleet' };

  const ready = history.readyMs;
  const readyText = ready !== undefined && ready >= 1000 ? `, ${seconds(ready)} to get ready` : '';
  const plusReady = (at: number): number => Math.max(now, at) + (ready ?? 0);

  const sorted = ends.inOrder;
  if (sorted.length > 0) {
    const sessions = ends.sessions;
    const sooner = sessions > 0 ? ` (${sessions} held by a session, which may end sooner)` : '';
    const needed = ahead + 1;
    const noun = input.leaseNoun ?? { one: `lease of ${label}`, many: `leases of ${label}` };
    const leases = (count: number): string =>
      count === 1 ? `1 ${noun.one} ends` : `${count} ${noun.many} end`;
    if (needed <= sorted.length) {
      const end = sorted[needed - 1] as LeaseEnd;
      return {
        at: plusReady(end.expiresAt),
        basis: `${leases(needed)} before${sooner}${behind}${readyText}`,
      };
    }
    // More ahead than leases end: the devices freed are taken again, for as long as leases of
    // this class last.
    const lasts = history.leaseMs;
    if (lasts === undefined)
      return {
        basis: `no basis: ${ahead} ahead of you and only ${leases(sorted.length)} at a known time; no lease of ${label} ended in the last hour`,
      };
    const rounds = Math.floor(ahead / sorted.length);
    const end = sorted[ahead % sorted.length] as LeaseEnd;
    return {
      at: plusReady(end.expiresAt + rounds * lasts),
      basis: `${leases(sorted.length)} before${sooner}${behind}, each taken again for ${seconds(lasts)} (median lease of ${label})${readyText}`,
    };
  }

  // Full or busy, but no lease of ours to wait for (an agent busy with its own queue): only the
  // last hour's waits say anything.
  const waited = history.waitMs;
  if (waited === undefined)
    return {
      basis: `no basis: no lease with a known end holds a device it could use, and too few ${label} requests were granted in the last hour`,
    };
  const at = input.queuedAt + waited;
  if (at <= now)
    return {
      basis: `no basis: it has waited longer than ${label} requests took in the last hour (median ${seconds(waited)})`,
    };
  return {
    at,
    basis: `${label} requests were granted in ${seconds(waited)} (median of ${history.waits} in the last hour)`,
  };
}

/** The median of at least `min` samples, else undefined. */
export function median(samples: readonly number[], min: number): number | undefined {
  if (samples.length < min || samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[middle]
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function seconds(ms: number): string {
  return formatDuration(Math.round(ms / 1000));
}
