// What a walk's outcome does to the waiting requests' bookkeeping: reasons counted for the
// waiting-by-reason metric, a request's reasons written again only when they changed, and the
// queue's order.
import { describe, expect, it } from 'vitest';
import type { WorkerReason } from '../api/index.js';
import { SameReasons, queueOrder, reasonCounts } from './waiting-queue.js';

const drained = (worker: string): WorkerReason => ({ worker, reason: 'drained' });
const full = (worker: string): WorkerReason => ({
  worker,
  reason: 'full',
  capacityReason: 'platform-running-limit',
});

describe('reasonCounts', () => {
  it('counts every request that shares a list, once for each of its workers', () => {
    const iphones = [drained('a'), full('b'), full('c')];
    const ipads = [drained('a'), drained('b')];
    const counts = reasonCounts(
      new Map([
        [iphones, 3],
        [ipads, 2],
      ]),
    );
    // 3 requests × (1 drained + 2 full), 2 requests × 2 drained.
    expect(Object.fromEntries(counts)).toEqual({ drained: 3 + 4, full: 6 });
  });
});

describe('SameReasons', () => {
  it('tells equal lists from lists that differ in a worker, a reason or a capacity reason', () => {
    const same = new SameReasons();
    const before = [drained('a'), full('b')];
    expect(same.equal(before, [drained('a'), full('b')])).toBe(true);
    expect(same.equal(before, [drained('a'), drained('b')])).toBe(false);
    expect(same.equal(before, [drained('a'), full('c')])).toBe(false);
    expect(
      same.equal(before, [drained('a'), { ...full('b'), capacityReason: 'global-running-limit' }]),
    ).toBe(false);
    expect(same.equal(before, [drained('a')])).toBe(false);
  });

  it('answers each pair of lists as it first did, for every request holding them', () => {
    const same = new SameReasons();
    const before = [full('a')];
    const after = [drained('a')];
    const again = [full('a')];
    for (let request = 0; request < 3; request++) {
      expect(same.equal(before, after)).toBe(false);
      expect(same.equal(before, again)).toBe(true);
    }
  });
});

describe('queueOrder', () => {
  const second = Date.parse('2026-12-04T10:00:00Z');
  const names = (requests: { name: string }[]) => requests.map((request) => request.name);

  it('puts the first queued first, whatever the names', () => {
    const queued = [
      { name: 'after', queuedAt: second + 5, createdAt: second },
      { name: 'next', queuedAt: second + 2, createdAt: second },
    ];
    expect(names(queued.sort(queueOrder))).toEqual(['next', 'after']);
  });

  it('keeps requests queued in one pass in the order they were created, then seen', () => {
    // Seen in this order by the controller, all in one pass; "early" was created a second before.
    const seen = [
      { name: 'next', queuedAt: second + 9, createdAt: second + 1000 },
      { name: 'after', queuedAt: second + 9, createdAt: second + 1000 },
      { name: 'early', queuedAt: second + 9, createdAt: second },
    ];
    expect(names(seen.sort(queueOrder))).toEqual(['early', 'next', 'after']);
  });
});
