import { describe, expect, it } from 'vitest';
import {
  WAIT_BOUNDS_SECONDS,
  type UsageHistoryDocument,
  type UsageWaits,
} from '../../api/index.js';
import {
  classWaits,
  longestWaitLine,
  pointStarts,
  utilisationSeries,
  waitPoints,
  waitQuantile,
} from './usage.js';

const now = Date.UTC(2026, 11, 4, 10, 7, 0);
const bucket = (minutesAgo: number) => Math.floor((now - minutesAgo * 60_000) / 300_000) * 300;

function waits(model: string, list: number[]): UsageWaits {
  const cells = WAIT_BOUNDS_SECONDS.map(() => 0).concat(0);
  for (const wait of list) {
    const cell = WAIT_BOUNDS_SECONDS.findIndex((bound) => wait <= bound);
    cells[cell === -1 ? cells.length - 1 : cell]! += 1;
  }
  return {
    platform: 'ios',
    model,
    count: list.length,
    totalSeconds: list.reduce((sum, wait) => sum + wait, 0),
    minSeconds: Math.min(...list),
    maxSeconds: Math.max(...list),
    cells,
  };
}

const document: UsageHistoryDocument = {
  version: 1,
  bucketSeconds: 300,
  updatedAt: new Date(now).toISOString(),
  since: new Date(now - 86_400_000).toISOString(),
  buckets: [
    { start: bucket(180), waits: [waits('iPad Pro', [30, 30])], devices: [] },
    {
      start: bucket(0),
      waits: [waits('iPhone 16', [3, 4, 100]), waits('iPad Pro', [12])],
      devices: [
        { model: 'iPhone 16', leasedSeconds: 150, availableSeconds: 600 },
        { model: 'iPad Pro', leasedSeconds: 0, availableSeconds: 0 },
      ],
    },
  ],
};

describe("the Usage page's figures", () => {
  it('reads a quantile within the cell, never outside the waits seen', () => {
    expect(waitQuantile(waits('x', [12]), 0.5)).toBe(12);
    expect(waitQuantile(waits('x', [12]), 0.9)).toBe(12);
    // Two in (2, 5], one in (60, 120]: the median in the first cell, the p90 in the last.
    const three = waits('x', [3, 4, 100]);
    expect(waitQuantile(three, 0.5)).toBeGreaterThanOrEqual(3);
    expect(waitQuantile(three, 0.5)).toBeLessThanOrEqual(5);
    expect(waitQuantile(three, 0.9)).toBeGreaterThan(60);
    expect(waitQuantile(three, 0.9)).toBeLessThanOrEqual(100);
  });

  it('puts 5-minute points on the last hour and hourly points on the last day', () => {
    expect(pointStarts('hour', now)).toHaveLength(12);
    expect(pointStarts('hour', now).at(-1)).toBe(bucket(0) * 1000);
    expect(pointStarts('day', now)).toHaveLength(24);
    const hour = waitPoints(document, 'hour', now);
    expect(hour.filter((point) => point.count > 0)).toEqual([
      expect.objectContaining({ at: bucket(0) * 1000, count: 4 }),
    ]);
    const day = waitPoints(document, 'day', now);
    expect(day.filter((point) => point.count > 0).map((point) => point.count)).toEqual([2, 4]);
  });

  it('draws utilisation per model with available devices, as leased over available', () => {
    const series = utilisationSeries(document, 'hour', now);
    expect(series.map((one) => one.model)).toEqual(['iPhone 16']);
    expect(series[0]?.points.at(-1)?.ratio).toBe(0.25);
    expect(series[0]?.points[0]?.ratio).toBeUndefined();
  });

  it('names the class whose requests waited longest in total in the last day', () => {
    expect(classWaits(document, 'day', now).map((one) => [one.model, one.totalSeconds])).toEqual([
      ['iPhone 16', 107],
      ['iPad Pro', 72],
    ]);
    expect(longestWaitLine(document, now)).toMatch(
      /^Requests for iPhone 16 waited 1m 47s in total in the last day \(3 granted; median \d+s, p90 1m \d\ds\)/,
    );
    expect(longestWaitLine({ ...document, buckets: [] }, now)).toBe(
      'No request was granted in the last day: there are no waits to show.',
    );
  });
});
