// The client-side rate limiter: a burst goes at once, then one token every 1/qps seconds, in the
// order callers asked.
import { describe, expect, it } from 'vitest';
import { TokenBucket } from './kube-client.js';

function bucket(qps: number, burst?: number) {
  let now = 0;
  const limiter = new TokenBucket({ qps, burst }, () => now);
  const advance = (ms: number) => {
    now += ms;
  };
  return { limiter, advance };
}

describe('TokenBucket', () => {
  it('lets a burst go at once, then spaces callers 1/qps apart in the order they asked', () => {
    const { limiter } = bucket(10, 3);
    expect([limiter.reserve(), limiter.reserve(), limiter.reserve()]).toEqual([0, 0, 0]);
    expect(limiter.reserve()).toBeCloseTo(100);
    expect(limiter.reserve()).toBeCloseTo(200);
    expect(limiter.reserve()).toBeCloseTo(300);
  });

  it('refills at qps, never beyond the burst', () => {
    const { limiter, advance } = bucket(50, 2);
    limiter.reserve();
    limiter.reserve();
    advance(20);
    expect(limiter.reserve()).toBe(0);
    expect(limiter.reserve()).toBeCloseTo(20);
    advance(10_000);
    expect([limiter.reserve(), limiter.reserve()]).toEqual([0, 0]);
    expect(limiter.reserve()).toBeGreaterThan(0);
  });

  it('sustains qps: the thousandth of a thousand callers at once waits (1000 - burst) / qps', () => {
    const { limiter } = bucket(100, 200);
    const waits = Array.from({ length: 1000 }, () => limiter.reserve());
    expect(waits.filter((wait) => wait === 0)).toHaveLength(200);
    expect(waits[999]).toBeCloseTo(8000);
  });

  it('tryTake: takes what is there now, refuses past it without a debt, and refills at qps', () => {
    const { limiter, advance } = bucket(2, 3);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, true]);
    expect(limiter.tryTake()).toBe(false);
    expect(limiter.tryTake()).toBe(false);
    advance(499);
    expect(limiter.tryTake()).toBe(false);
    advance(1);
    expect(limiter.tryTake()).toBe(true);
    expect(limiter.tryTake()).toBe(false);
    advance(60_000);
    expect([1, 2, 3, 4].map(() => limiter.tryTake())).toEqual([true, true, true, false]);
  });

  it('defaults the burst to qps, at least one', () => {
    expect(new TokenBucket({ qps: 0.5 }).burst).toBe(1);
    expect(new TokenBucket({ qps: 50 }).burst).toBe(50);
    expect(() => new TokenBucket({ qps: 0 })).toThrow(/qps/);
  });
});
