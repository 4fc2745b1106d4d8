// The write queue: a bound on writes in flight, dispatches and outcomes before bookkeeping before
// presence before progress, and a rate for presence and progress that never holds a slot while it
// waits.
import { describe, expect, it } from 'vitest';
import { WriteQueue, type WritePriority } from './write-queue.js';

/** A write that finishes when the test says so. */
function controlled() {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const write = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      finishers.set(name, () => resolve(name));
    });
  const finish = async (name: string) => {
    finishers.get(name)?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, write, finish };
}

describe('WriteQueue', () => {
  it('keeps at most `concurrency` writes in flight', async () => {
    const queue = new WriteQueue({ concurrency: 2 });
    const { started, write, finish } = controlled();
    const done = ['a', 'b', 'c', 'd'].map((name) => queue.run('dispatch', write(name)));
    expect(started).toEqual(['a', 'b']);
    expect(queue.inFlight).toBe(2);
    await finish('a');
    expect(started).toEqual(['a', 'b', 'c']);
    await finish('b');
    await finish('c');
    await finish('d');
    expect(await Promise.all(done)).toEqual(['a', 'b', 'c', 'd']);
    expect(queue.inFlight).toBe(0);
  });

  it('starts waiting dispatches before bookkeeping, and bookkeeping before progress', async () => {
    const queue = new WriteQueue({ concurrency: 1 });
    const { started, write, finish } = controlled();
    void queue.run('progress', write('first'));
    const order: [WritePriority, string][] = [
      ['progress', 'p1'],
      ['bookkeeping', 'b1'],
      ['dispatch', 'd1'],
      ['progress', 'p2'],
      ['dispatch', 'd2'],
    ];
    for (const [priority, name] of order) void queue.run(priority, write(name));
    expect(queue.depth).toEqual({
      outcome: 0,
      dispatch: 2,
      bookkeeping: 1,
      presence: 0,
      progress: 2,
    });
    for (const name of ['first', 'd1', 'd2', 'b1', 'p1', 'p2']) await finish(name);
    expect(started).toEqual(['first', 'd1', 'd2', 'b1', 'p1', 'p2']);
  });

  it('tells the grants made before the rest of a line of dispatches', async () => {
    const queue = new WriteQueue({ concurrency: 1 });
    const { started, write, finish } = controlled();
    void queue.run('dispatch', write('busy'));
    // A walk's Lease creates are queued; then the agents grant two Leases already made.
    for (let index = 0; index < 6; index++) void queue.run('dispatch', write(`create${index}`));
    queue.schedule('r1', 'outcome', write('r1 granted'));
    queue.schedule('r2', 'outcome', write('r2 granted'));
    await finish('busy');
    for (let step = 0; step < 5; step++) await finish(started.at(-1) ?? '');
    expect(started).toEqual([
      'busy',
      'r1 granted',
      'r2 granted',
      'create0',
      'create1',
      'create2',
      'create3',
    ]);
  });

  it('gives every lane its share while all have work: progress is late, never starved', async () => {
    const queue = new WriteQueue({ concurrency: 1 });
    const { started, write, finish } = controlled();
    void queue.run('dispatch', write('dbusy'));
    for (let index = 0; index < 20; index++) {
      void queue.run('outcome', write(`o${index}`));
      void queue.run('dispatch', write(`d${index}`));
      void queue.run('bookkeeping', write(`b${index}`));
      void queue.run('presence', write(`a${index}`));
      void queue.run('progress', write(`p${index}`));
    }
    await finish('dbusy');
    for (let step = 0; step < 36; step++) await finish(started.at(-1) ?? '');
    // The first 36 writes, the dispatch that kept the queue busy among them.
    const first = started.slice(0, 36);
    const lane = (letter: string) => first.filter((name) => name.startsWith(letter)).length;
    expect([lane('o'), lane('d'), lane('b'), lane('a'), lane('p')]).toEqual([12, 12, 6, 4, 2]);
  });

  it('starts a presence write ahead of a line of progress writes, on the same rate', async () => {
    let now = 0;
    const sleepers: (() => void)[] = [];
    const queue = new WriteQueue({
      concurrency: 1,
      progressRate: { qps: 10, burst: 1 },
      now: () => now,
      wait: () => new Promise<void>((resolve) => sleepers.push(resolve)),
    });
    const { started, write, finish } = controlled();
    void queue.run('dispatch', write('grant'));
    for (let index = 0; index < 5; index++) void queue.run('progress', write(`p${index}`));
    void queue.run('presence', write('away'));
    await finish('grant');
    // The burst's one token goes to the presence write, not to the first of the older line.
    expect(started).toEqual(['grant', 'away']);
    await finish('away');
    // The next waits for a token: presence took it from the same bucket.
    expect(started).toEqual(['grant', 'away']);
    now += 100;
    sleepers.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['grant', 'away', 'p0']);
  });

  it('keeps progress to its rate without holding a slot, so a dispatch still goes at once', async () => {
    let now = 0;
    const sleepers: (() => void)[] = [];
    const queue = new WriteQueue({
      concurrency: 4,
      progressRate: { qps: 10, burst: 1 },
      now: () => now,
      wait: () => new Promise<void>((resolve) => sleepers.push(resolve)),
    });
    const { started, write, finish } = controlled();
    void queue.run('progress', write('p1'));
    void queue.run('progress', write('p2'));
    expect(started).toEqual(['p1']);
    // p2 waits for its token (100 ms at 10/s); a dispatch meanwhile takes a free slot at once.
    void queue.run('dispatch', write('d1'));
    expect(started).toEqual(['p1', 'd1']);
    now += 100;
    sleepers.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['p1', 'd1', 'p2']);
    await finish('p1');
    await finish('d1');
    await finish('p2');
    expect(queue.inFlight).toBe(0);
  });

  it('keeps one place per key, moved up when scheduled more urgently, running the newest write', async () => {
    const queue = new WriteQueue({ concurrency: 1 });
    const { started, write, finish } = controlled();
    void queue.run('dispatch', write('busy'));
    queue.schedule('r1', 'progress', write('r1 reasons'));
    queue.schedule('r2', 'progress', write('r2 reasons'));
    queue.schedule('r1', 'progress', write('r1 newer reasons'));
    queue.schedule('r2', 'outcome', write('r2 granted'));
    expect(queue.depth).toEqual({
      outcome: 1,
      dispatch: 0,
      bookkeeping: 0,
      presence: 0,
      progress: 1,
    });
    await finish('busy');
    await finish('r2 granted');
    await finish('r1 newer reasons');
    expect(started).toEqual(['busy', 'r2 granted', 'r1 newer reasons']);
  });

  it('runs a key once more after its write in flight when scheduled meanwhile', async () => {
    const queue = new WriteQueue({ concurrency: 4 });
    const { started, write, finish } = controlled();
    queue.schedule('r1', 'progress', write('first'));
    queue.schedule('r1', 'progress', write('second'));
    queue.schedule('r1', 'dispatch', write('third'));
    expect(started).toEqual(['first']);
    await finish('first');
    expect(started).toEqual(['first', 'third']);
    await finish('third');
    expect(queue.inFlight).toBe(0);
  });

  it('passes a failed write on to its caller and goes on with the next', async () => {
    const queue = new WriteQueue({ concurrency: 1 });
    const failed = queue.run('dispatch', () => Promise.reject(new Error('conflict')));
    const next = queue.run('dispatch', () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('conflict');
    expect(await next).toBe('next');
  });
});
