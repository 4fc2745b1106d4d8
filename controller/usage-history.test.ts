import { describe, expect, it } from 'vitest';
import {
  USAGE_BUCKET_SECONDS,
  USAGE_MAX_CLASSES,
  UsageHistoryDocument,
  WAIT_BOUNDS_SECONDS,
} from '../api/index.js';
import { UsageHistory } from './usage-history.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** A bucket's start: 10:00 of some day. */
const t0 = Date.UTC(2026, 11, 4, 10, 0, 0);

describe('the usage history of the last day', () => {
  it('puts each wait in the 5-minute bucket of its grant, by class, with count, total, bounds and cells', () => {
    const history = new UsageHistory(t0);
    history.wait(t0 + 1 * MINUTE, 'ios', 'iPhone 16', 12);
    history.wait(t0 + 4 * MINUTE, 'ios', 'iPhone 16', 0.5);
    history.wait(t0 + 4 * MINUTE, 'android', 'any', 40);
    history.wait(t0 + 6 * MINUTE, 'ios', 'iPhone 16', 100);
    const document = history.document(t0 + 7 * MINUTE);
    expect(UsageHistoryDocument.parse(document)).toEqual(document);
    expect(document.buckets.map((bucket) => bucket.start * 1000)).toEqual([t0, t0 + 5 * MINUTE]);
    const [first, second] = document.buckets;
    const iphone = first?.waits.find((waits) => waits.model === 'iPhone 16');
    expect(iphone).toMatchObject({ count: 2, totalSeconds: 12.5, minSeconds: 0.5, maxSeconds: 12 });
    // 0.5 s in the cell up to 1 s, 12 s in the cell up to 20 s.
    expect(iphone?.cells[WAIT_BOUNDS_SECONDS.indexOf(1)]).toBe(1);
    expect(iphone?.cells[WAIT_BOUNDS_SECONDS.indexOf(20)]).toBe(1);
    expect(first?.waits.find((waits) => waits.platform === 'android')).toMatchObject({
      model: 'any',
      count: 1,
    });
    expect(second?.waits.map((waits) => [waits.model, waits.count])).toEqual([['iPhone 16', 1]]);
  });

  it('spreads device time over the buckets a span crosses, each its share', () => {
    const history = new UsageHistory(t0);
    // 3 minutes before a bucket's end to 2 minutes after: 3/5 in the first, 2/5 in the next.
    history.deviceTime(t0 + 2 * MINUTE, t0 + 7 * MINUTE, 'iPhone 16', 300, 600);
    history.deviceTime(t0 + 2 * MINUTE, t0 + 7 * MINUTE, 'iPhone 16', 0, 300);
    const [first, second] = history.document(t0 + 7 * MINUTE).buckets;
    expect(first?.devices).toEqual([
      { model: 'iPhone 16', leasedSeconds: 180, availableSeconds: 540 },
    ]);
    expect(second?.devices).toEqual([
      { model: 'iPhone 16', leasedSeconds: 120, availableSeconds: 360 },
    ]);
  });

  it('keeps a day: older buckets go, and the history says since when it was kept', () => {
    const history = new UsageHistory(t0);
    history.wait(t0, 'ios', 'iPhone 16', 5);
    history.wait(t0 + 2 * 60 * MINUTE, 'ios', 'iPhone 16', 5);
    expect(history.document(t0 + 3 * 60 * MINUTE).since).toBe(new Date(t0).toISOString());
    const later = t0 + DAY + 10 * MINUTE;
    const document = history.document(later);
    expect(document.buckets.map((bucket) => bucket.start * 1000)).toEqual([t0 + 2 * 60 * MINUTE]);
    expect(document.since).toBe(new Date(later - DAY).toISOString());
    // A wait older than the day is not kept.
    history.wait(later - DAY - 6 * MINUTE, 'ios', 'iPhone 16', 5, later);
    expect(history.document(later).buckets).toHaveLength(1);
  });

  it('holds at most a day of buckets and USAGE_MAX_CLASSES classes a bucket, the rest as other', () => {
    const history = new UsageHistory(t0);
    for (let minute = 0; minute < 2 * 24 * 60; minute += 5)
      history.wait(t0 + minute * MINUTE, 'ios', 'iPhone 16', 1, t0 + minute * MINUTE);
    expect(history.document(t0 + 2 * DAY).buckets.length).toBeLessThanOrEqual(
      86_400 / USAGE_BUCKET_SECONDS,
    );
    for (let index = 0; index < USAGE_MAX_CLASSES + 10; index++)
      history.wait(t0 + 2 * DAY, 'android', `Pixel ${index}`, 1);
    const last = history.document(t0 + 2 * DAY).buckets.at(-1);
    expect(last?.waits).toHaveLength(USAGE_MAX_CLASSES + 1);
    expect(last?.waits.find((waits) => waits.model === 'other')).toMatchObject({ count: 10 });
  });

  it('takes up a history published before, adding to it', () => {
    const before = new UsageHistory(t0);
    before.wait(t0 + MINUTE, 'ios', 'iPhone 16', 10);
    before.deviceTime(t0, t0 + MINUTE, 'iPhone 16', 60, 120);
    const published = before.document(t0 + 2 * MINUTE);
    const after = new UsageHistory(t0 + 3 * MINUTE);
    after.adopt(published, t0 + 3 * MINUTE);
    after.wait(t0 + 3 * MINUTE, 'ios', 'iPhone 16', 30);
    const document = after.document(t0 + 4 * MINUTE);
    expect(document.since).toBe(new Date(t0).toISOString());
    expect(document.buckets[0]?.waits[0]).toMatchObject({
      count: 2,
      totalSeconds: 40,
      minSeconds: 10,
      maxSeconds: 30,
    });
    expect(document.buckets[0]?.devices[0]).toMatchObject({ leasedSeconds: 60 });
  });
});
