import { describe, expect, it } from 'vitest';
import {
  afterFailedRetry,
  endsQuarantine,
  firstRetry,
  nextDue,
  quarantineReason,
} from './quarantine-plan.js';

const MINUTE = 60_000;
const settings = { backoffMs: [1 * MINUTE, 5 * MINUTE, 30 * MINUTE] };

describe('the quarantine backoff plan', () => {
  it('tries a virtual device again after 1, 5 and 30 minutes, then deletes it if owned', () => {
    expect(firstRetry(1000, false, settings)).toEqual({ nextRetryAtMs: 1000 + MINUTE });
    expect(afterFailedRetry(1, 10_000, true, settings)).toEqual({
      kind: 'retry-later',
      nextRetryAtMs: 10_000 + 5 * MINUTE,
    });
    expect(afterFailedRetry(2, 10_000, true, settings)).toEqual({
      kind: 'retry-later',
      nextRetryAtMs: 10_000 + 30 * MINUTE,
    });
    expect(afterFailedRetry(3, 10_000, true, settings)).toEqual({ kind: 'delete' });
    expect(afterFailedRetry(3, 10_000, false, settings)).toEqual({ kind: 'await-operator' });
  });

  it('never retries a physical device, nor any when no backoff is configured', () => {
    expect(firstRetry(0, true, settings)).toEqual({});
    expect(firstRetry(0, false, { backoffMs: [] })).toEqual({});
    expect(afterFailedRetry(1, 0, true, { backoffMs: [MINUTE] })).toEqual({ kind: 'delete' });
  });

  it('ends only a quarantine begun before the request', () => {
    expect(endsQuarantine(1000, 2000)).toBe(true);
    expect(endsQuarantine(2000, 2000)).toBe(false);
    expect(endsQuarantine(3000, 2000)).toBe(false);
    expect(endsQuarantine(3000, Number.NaN)).toBe(false);
  });

  it('says the cause and what the last retry saw', () => {
    const record = { cause: 'boot failed: timed out', sinceMs: 0, retries: 0 };
    expect(quarantineReason(record)).toBe('boot failed: timed out');
    expect(quarantineReason({ ...record, retries: 2, lastFailure: 'not answering' })).toBe(
      'boot failed: timed out; retry 2 failed: not answering',
    );
    expect(quarantineReason({ ...record, cause: 'x'.repeat(300) })).toHaveLength(256);
  });

  it('finds the earliest retry due, skipping those with none due (running, or for an operator)', () => {
    expect(
      nextDue([
        { cause: 'b', sinceMs: 0, retries: 0, nextRetryAtMs: 900 },
        { cause: 'c', sinceMs: 0, retries: 3 },
        { cause: 'd', sinceMs: 0, retries: 1, nextRetryAtMs: 700 },
      ]),
    ).toBe(700);
    expect(nextDue([])).toBeUndefined();
  });
});
