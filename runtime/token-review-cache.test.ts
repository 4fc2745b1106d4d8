// The proxy's memory of accepted tokens: one review per token per TTL, only accepted tokens
// remembered, bounded, keyed by digest, one review shared by callers that ask at once.
import { describe, expect, it } from 'vitest';
import { TokenReviewCache } from './token-review-cache.js';

function counting(answers: Record<string, string | undefined>) {
  const asked: string[] = [];
  const review = (token: string) => {
    asked.push(token);
    return Promise.resolve(answers[token]);
  };
  return { asked, review };
}

describe('TokenReviewCache', () => {
  it('asks once per token while its entry lives, and again after', async () => {
    let now = 0;
    const cache = new TokenReviewCache<string>({ ttlMs: 10_000, now: () => now });
    const { asked, review } = counting({ t1: 'alice' });
    expect(await cache.review('t1', review)).toBe('alice');
    now += 9_999;
    expect(await cache.review('t1', review)).toBe('alice');
    expect(asked).toEqual(['t1']);
    now += 1;
    expect(await cache.review('t1', review)).toBe('alice');
    expect(asked).toEqual(['t1', 't1']);
  });

  it('does not remember a refused token, nor a review that failed', async () => {
    const cache = new TokenReviewCache<string>({ ttlMs: 10_000 });
    const { asked, review } = counting({});
    expect(await cache.review('bad', review)).toBeUndefined();
    expect(await cache.review('bad', review)).toBeUndefined();
    expect(asked).toEqual(['bad', 'bad']);
    await expect(cache.review('t', () => Promise.reject(new Error('unavailable')))).rejects.toThrow(
      'unavailable',
    );
    expect(cache.size).toBe(0);
  });

  it('shares one review among callers that ask at once', async () => {
    const cache = new TokenReviewCache<string>({ ttlMs: 10_000 });
    let resolve: (user: string) => void = () => undefined;
    let reviews = 0;
    const review = () => {
      reviews++;
      return new Promise<string>((done) => (resolve = done));
    };
    const both = Promise.all([cache.review('t', review), cache.review('t', review)]);
    resolve('alice');
    expect(await both).toEqual(['alice', 'alice']);
    expect(reviews).toBe(1);
  });

  it('keeps at most maxEntries, the oldest going first', async () => {
    const cache = new TokenReviewCache<string>({ ttlMs: 10_000, maxEntries: 2 });
    const { asked, review } = counting({ a: 'a', b: 'b', c: 'c' });
    for (const token of ['a', 'b', 'c', 'c', 'b', 'a']) await cache.review(token, review);
    expect(cache.size).toBe(2);
    expect(asked).toEqual(['a', 'b', 'c', 'a']);
  });
});
