// The work queue on a hand-moved clock: dedupe, dirty while processing, delays, backoff.
import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { WorkQueue, backoffDelay, retryWithBackoff, type ReconcileResult } from './workqueue.js';

/** Lets queued microtasks (the drains, and work that awaits) run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
}

function queueWith(
  reconcile: (key: string) => ReconcileResult | Promise<ReconcileResult>,
  options: { concurrency?: number } = {},
) {
  const clock = new ManualClock(0);
  const events: string[] = [];
  const queue = new WorkQueue<string>({
    name: 'test',
    clock,
    reconcile,
    random: () => 0,
    backoff: { initialMs: 100, maxMs: 1000, jitter: 0.5 },
    defer: (run) => queueMicrotask(run),
    observer: {
      depth: (_queue, depth) => events.push(`depth ${depth}`),
      retried: () => events.push('retried'),
      failed: () => events.push('failed'),
    },
    ...options,
  });
  return { clock, queue, events };
}

describe('WorkQueue', () => {
  it('works on a key added twice before its turn once', async () => {
    const seen: string[] = [];
    const { queue } = queueWith((key) => void seen.push(key));
    queue.add('a');
    queue.add('b');
    queue.add('a');
    await settle();
    expect(seen).toEqual(['a', 'b']);
  });

  it('runs a key added while its work runs once more after, never twice at once', async () => {
    let release: () => void = () => undefined;
    let running = 0;
    let most = 0;
    let runs = 0;
    const { queue } = queueWith(
      async () => {
        runs++;
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => (release = resolve));
        running--;
      },
      { concurrency: 4 },
    );
    queue.add('a');
    await settle();
    queue.add('a');
    queue.add('a');
    await settle();
    expect(runs).toBe(1);
    release();
    await settle();
    expect(runs).toBe(2);
    release();
    await settle();
    expect(runs).toBe(2);
    expect(most).toBe(1);
  });

  it('keeps to its concurrency across keys', async () => {
    const releases: (() => void)[] = [];
    const { queue } = queueWith(() => new Promise<void>((resolve) => releases.push(resolve)), {
      concurrency: 2,
    });
    for (const key of ['a', 'b', 'c']) queue.add(key);
    await settle();
    expect(releases).toHaveLength(2);
    releases.shift()?.();
    await settle();
    expect(releases).toHaveLength(2);
  });

  it('adds a key after its delay, the earliest of several asks winning', async () => {
    const seen: number[] = [];
    const { clock, queue } = queueWith(() => void seen.push(clock.now()));
    queue.addAfter('a', 500);
    queue.addAfter('a', 200);
    queue.addAfter('a', 900);
    clock.advance(199);
    await settle();
    expect(seen).toEqual([]);
    clock.advance(1);
    await settle();
    expect(seen).toEqual([200]);
    clock.advance(1000);
    await settle();
    expect(seen).toEqual([200]);
  });

  it('looks again when the work asks for it (requeueAfterMs)', async () => {
    const seen: number[] = [];
    const { clock, queue } = queueWith(() => {
      seen.push(clock.now());
      return seen.length < 3 ? { requeueAfterMs: 50 } : undefined;
    });
    queue.add('a');
    await settle();
    clock.advance(50);
    await settle();
    clock.advance(50);
    await settle();
    clock.advance(500);
    await settle();
    expect(seen).toEqual([0, 50, 100]);
  });

  it('retries a failing key with exponential backoff, capped, and forgets it on success', async () => {
    const seen: number[] = [];
    let failuresLeft = 6;
    const { clock, queue, events } = queueWith((key) => {
      seen.push(clock.now());
      if (failuresLeft-- > 0) throw new Error('the API server said no');
      queue.forget(key);
    });
    queue.add('a');
    await settle();
    for (let step = 0; step < 40; step++) {
      clock.advance(100);
      await settle();
    }
    // 100, 200, 400, 800, then the 1000 ms cap.
    expect(seen).toEqual([0, 100, 300, 700, 1500, 2500, 3500]);
    expect(events.filter((event) => event === 'failed')).toHaveLength(6);
    expect(events.filter((event) => event === 'retried')).toHaveLength(6);
    expect(queue.retries('a')).toBe(0);
  });

  it('counts a failure made outside the work and retries the key', async () => {
    const seen: number[] = [];
    const { clock, queue, events } = queueWith(() => void seen.push(clock.now()));
    queue.requeueAfterFailure('a', new Error('a write failed'));
    queue.requeueAfterFailure('a', new Error('it failed again'));
    expect(queue.retries('a')).toBe(2);
    clock.advance(99);
    await settle();
    expect(seen).toEqual([]);
    // The first ask (100 ms) is earlier than the second (200 ms) and wins.
    clock.advance(1);
    await settle();
    expect(seen).toEqual([100]);
    expect(events).toContain('failed');
  });

  it('spreads retries with jitter, never past the cap', () => {
    const backoff = { initialMs: 100, maxMs: 1000, jitter: 0.5 };
    expect(backoffDelay(backoff, 1, () => 0)).toBe(100);
    expect(backoffDelay(backoff, 1, () => 0.999)).toBeCloseTo(50, 0);
    expect(backoffDelay(backoff, 3, () => 0.5)).toBe(300);
    expect(backoffDelay(backoff, 30, () => 0)).toBe(1000);
  });

  it('reports its depth as keys come and go', async () => {
    const { queue, events } = queueWith(() => undefined);
    queue.add('a');
    queue.add('b');
    await settle();
    expect(events.filter((event) => event.startsWith('depth'))).toEqual([
      'depth 1',
      'depth 2',
      'depth 1',
      'depth 0',
    ]);
  });

  it('takes nothing more once shut down, and cancels its delays', async () => {
    const seen: string[] = [];
    const { clock, queue } = queueWith((key) => void seen.push(key));
    queue.addAfter('a', 100);
    await queue.shutDown();
    queue.add('b');
    clock.advance(200);
    await settle();
    expect(seen).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('drops a removed key’s delay and backoff', async () => {
    const seen: string[] = [];
    const { clock, queue } = queueWith((key) => void seen.push(key));
    queue.addRateLimited('a');
    queue.remove('a');
    expect(queue.retries('a')).toBe(0);
    clock.advance(1000);
    await settle();
    expect(seen).toEqual([]);
  });
});

describe('retryWithBackoff', () => {
  it('tries again after each backoff until the step succeeds', async () => {
    const clock = new ManualClock(0);
    const tries: number[] = [];
    const done = retryWithBackoff(
      () => {
        tries.push(clock.now());
        return tries.length < 3 ? Promise.reject(new Error('503')) : Promise.resolve('registered');
      },
      { clock, attempts: 5, retryable: () => true, random: () => 0 },
    );
    for (let step = 0; step < 20; step++) {
      await settle();
      clock.advance(100);
    }
    await expect(done).resolves.toBe('registered');
    expect(tries).toEqual([0, 500, 1500]);
  });

  it('throws at once an error not worth retrying, and the last one', async () => {
    const clock = new ManualClock(0);
    await expect(
      retryWithBackoff(() => Promise.reject(new Error('403')), {
        clock,
        attempts: 5,
        retryable: () => false,
      }),
    ).rejects.toThrow('403');
    await expect(
      retryWithBackoff(() => Promise.reject(new Error('503')), {
        clock,
        attempts: 1,
        retryable: () => true,
      }),
    ).rejects.toThrow('503');
  });
});
