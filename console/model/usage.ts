// The Usage page's figures (pure): from the controller's usage history (api/usage-history.ts, ADR
// 0027), the waits of granted requests (median and p90) and the utilisation per model, in 5-minute
// points over the last hour and hourly points over the last day, and the one line on the class
// whose requests waited longest in total. Quantiles are read from each point's histogram cells,
// within the shortest and longest wait seen, so one wait alone is reported exactly.
import {
  WAIT_BOUNDS_SECONDS,
  type UsageHistoryDocument,
  type UsageWaits,
} from '../../api/index.js';
import { formatDuration } from './views.js';

export type UsageWindow = 'hour' | 'day';

export const WINDOWS: Record<UsageWindow, { stepMs: number; points: number }> = {
  hour: { stepMs: 5 * 60_000, points: 12 },
  day: { stepMs: 60 * 60_000, points: 24 },
};

export interface WaitPoint {
  /** The point's start (ms since the epoch). */
  at: number;
  count: number;
  /** Seconds; none when no request was granted in it. */
  median?: number | undefined;
  p90?: number | undefined;
}

export interface UtilisationSeries {
  model: string;
  /** Leased time over available time, 0 to 1; none when no device of the model was available. */
  points: { at: number; ratio?: number | undefined }[];
}

export interface ClassWaits {
  platform: string;
  model: string;
  count: number;
  totalSeconds: number;
  median: number;
  p90: number;
}

/** Waits summed over buckets and classes: what a quantile is read from. */
type Merged = Pick<UsageWaits, 'count' | 'totalSeconds' | 'minSeconds' | 'maxSeconds' | 'cells'>;

function merge(waits: Iterable<UsageWaits>): Merged | undefined {
  let merged: Merged | undefined;
  for (const one of waits) {
    if (!merged) {
      merged = { ...one, cells: [...one.cells] };
      continue;
    }
    merged.minSeconds = Math.min(merged.minSeconds, one.minSeconds);
    merged.maxSeconds = Math.max(merged.maxSeconds, one.maxSeconds);
    merged.count += one.count;
    merged.totalSeconds += one.totalSeconds;
    const cells = merged.cells;
    one.cells.forEach((count, cell) => (cells[cell] = (cells[cell] ?? 0) + count));
  }
  return merged;
}

/**
 * The q-quantile (0 to 1) of merged waits: the cell it falls in, linearly within the cell's
 * bounds, and never outside the shortest and longest wait seen.
 */
export function waitQuantile(waits: Merged, q: number): number {
  const rank = q * waits.count;
  let below = 0;
  for (let cell = 0; cell < waits.cells.length; cell++) {
    const count = waits.cells[cell] ?? 0;
    if (count > 0 && below + count >= rank) {
      const lower = cell === 0 ? 0 : (WAIT_BOUNDS_SECONDS[cell - 1] ?? 0);
      const upper = WAIT_BOUNDS_SECONDS[cell] ?? waits.maxSeconds;
      const within = lower + ((upper - lower) * (rank - below)) / count;
      return Math.min(waits.maxSeconds, Math.max(waits.minSeconds, within));
    }
    below += count;
  }
  return waits.maxSeconds;
}

/** The points of a window ending now: their starts, oldest first. */
export function pointStarts(window: UsageWindow, now: number): number[] {
  const { stepMs, points } = WINDOWS[window];
  const last = Math.floor(now / stepMs) * stepMs;
  return Array.from({ length: points }, (_, index) => last - (points - 1 - index) * stepMs);
}

function bucketsIn(document: UsageHistoryDocument, from: number, to: number) {
  return document.buckets.filter(
    (bucket) => bucket.start * 1000 >= from && bucket.start * 1000 < to,
  );
}

/** Median and p90 of the waits of requests granted in each point, all classes together. */
export function waitPoints(
  document: UsageHistoryDocument,
  window: UsageWindow,
  now: number,
): WaitPoint[] {
  const { stepMs } = WINDOWS[window];
  return pointStarts(window, now).map((at) => {
    const merged = merge(bucketsIn(document, at, at + stepMs).flatMap((bucket) => bucket.waits));
    if (!merged) return { at, count: 0 };
    return {
      at,
      count: merged.count,
      median: waitQuantile(merged, 0.5),
      p90: waitQuantile(merged, 0.9),
    };
  });
}

/** Each model's leased share of its available device time, point by point. */
export function utilisationSeries(
  document: UsageHistoryDocument,
  window: UsageWindow,
  now: number,
): UtilisationSeries[] {
  const { stepMs } = WINDOWS[window];
  const starts = pointStarts(window, now);
  const from = starts[0] ?? now;
  const models = new Set<string>();
  for (const bucket of bucketsIn(document, from, now + stepMs))
    for (const devices of bucket.devices)
      if (devices.availableSeconds > 0) models.add(devices.model);
  return [...models].sort().map((model) => ({
    model,
    points: starts.map((at) => {
      let leased = 0;
      let available = 0;
      for (const bucket of bucketsIn(document, at, at + stepMs))
        for (const devices of bucket.devices)
          if (devices.model === model) {
            leased += devices.leasedSeconds;
            available += devices.availableSeconds;
          }
      return { at, ratio: available > 0 ? Math.min(1, leased / available) : undefined };
    }),
  }));
}

/** The waits of each class over the window, the longest total first. */
export function classWaits(
  document: UsageHistoryDocument,
  window: UsageWindow,
  now: number,
): ClassWaits[] {
  const from = pointStarts(window, now)[0] ?? now;
  const byClass = new Map<string, UsageWaits[]>();
  for (const bucket of bucketsIn(document, from, now + WINDOWS[window].stepMs))
    for (const waits of bucket.waits) {
      const key = `${waits.platform}\n${waits.model}`;
      byClass.set(key, [...(byClass.get(key) ?? []), waits]);
    }
  return [...byClass.values()]
    .flatMap((list) => {
      const merged = merge(list);
      const first = list[0];
      if (!merged || !first) return [];
      return [
        {
          platform: first.platform,
          model: first.model,
          count: merged.count,
          totalSeconds: merged.totalSeconds,
          median: waitQuantile(merged, 0.5),
          p90: waitQuantile(merged, 0.9),
        },
      ];
    })
    .sort((a, b) => b.totalSeconds - a.totalSeconds || a.model.localeCompare(b.model));
}

const PLATFORM_NAMES: Record<string, string> = { ios: 'iOS', android: 'Android' };

/** "iPhone 16", or "any iOS device" for requests that named no model. */
export function className(waits: Pick<ClassWaits, 'platform' | 'model'>): string {
  const platform = PLATFORM_NAMES[waits.platform] ?? waits.platform;
  if (waits.model === 'any') return `any ${platform} device`;
  if (waits.model === 'other') return `other ${platform} models`;
  return waits.model;
}

/** A wait for people: "0.4s" below a second, else as the console says durations. */
export function formatWait(seconds: number): string {
  if (seconds === 0) return '0s';
  return seconds < 1 ? `${seconds.toFixed(1)}s` : formatDuration(seconds * 1000);
}

/**
 * The page's one line: the class whose granted requests waited longest in total in the last day,
 * and how long. Only what was measured: the waits of requests granted, counted at their grant.
 */
export function longestWaitLine(document: UsageHistoryDocument, now: number): string {
  const top = classWaits(document, 'day', now)[0];
  if (!top) return 'No request was granted in the last day: there are no waits to show.';
  const name = className(top);
  return (
    `Requests for ${name} waited ${formatWait(top.totalSeconds)} in total in the last day ` +
    `(${top.count} granted; median ${formatWait(top.median)}, p90 ${formatWait(top.p90)}): ` +
    `the most that more ${top.model === 'any' || top.model === 'other' ? 'such' : name} devices could have saved.`
  );
}
