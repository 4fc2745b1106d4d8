import { describe, expect, it } from 'vitest';
import {
  estimateGrant,
  historyMedians,
  leaseEnds,
  median,
  type ClassHistory,
  type EstimateInput,
  type LeaseEnd,
} from './estimate.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const MIN = 60_000;
const none: ClassHistory = { leaseMs: [], waitMs: [], readyMs: [] };

type Given = Omit<Partial<EstimateInput>, 'ends' | 'history'> & {
  ends?: LeaseEnd[];
  history?: ClassHistory;
};

function input({ ends = [], history = none, ...overrides }: Given): EstimateInput {
  return {
    now: NOW,
    queuedAt: NOW - 40_000,
    label: 'iPhone 16',
    ahead: 0,
    capacityBlocked: 1,
    ...overrides,
    ends: leaseEnds(ends),
    history: historyMedians(history),
  };
}

describe('estimateGrant on known expiries', () => {
  it('one lease ahead ending in 4 min: granted then', () => {
    expect(estimateGrant(input({ ends: [{ expiresAt: NOW + 4 * MIN, session: false }] }))).toEqual({
      at: NOW + 4 * MIN,
      basis: '1 lease of iPhone 16 ends before',
    });
  });

  it('second in its queue behind two leases: the later end', () => {
    const ends = [
      { expiresAt: NOW + 7 * MIN, session: false },
      { expiresAt: NOW + 3 * MIN, session: false },
    ];
    expect(estimateGrant(input({ ahead: 1, ends }))).toEqual({
      at: NOW + 7 * MIN,
      basis: '2 leases of iPhone 16 end before; 1 ahead of you',
    });
  });

  it('says a lease held by a session may end sooner', () => {
    expect(estimateGrant(input({ ends: [{ expiresAt: NOW + MIN, session: true }] }))).toEqual({
      at: NOW + MIN,
      basis: '1 lease of iPhone 16 ends before (1 held by a session, which may end sooner)',
    });
  });

  it('adds the time a dispatch of the class took to be granted', () => {
    const history = { ...none, readyMs: [20_000, 30_000, 40_000] };
    expect(
      estimateGrant(input({ ends: [{ expiresAt: NOW + MIN, session: false }], history })),
    ).toEqual({
      at: NOW + MIN + 30_000,
      basis: '1 lease of iPhone 16 ends before, 30s to get ready',
    });
  });

  it('more ahead than leases: the freed devices are taken again for the median lease', () => {
    const history = { ...none, leaseMs: [MIN, 2 * MIN, 2 * MIN, 3 * MIN, 9 * MIN] };
    const ends = [
      { expiresAt: NOW + MIN, session: false },
      { expiresAt: NOW + 2 * MIN, session: false },
    ];
    // Third in line: the first device freed, taken by the first ahead for 2 min.
    expect(estimateGrant(input({ ahead: 2, ends, history }))).toEqual({
      at: NOW + 3 * MIN,
      basis:
        '2 leases of iPhone 16 end before; 2 ahead of you, each taken again for 2m (median lease of iPhone 16)',
    });
  });

  it('more ahead than leases and no lease of the class ended lately: no basis', () => {
    const estimate = estimateGrant(
      input({ ahead: 3, ends: [{ expiresAt: NOW + MIN, session: false }] }),
    );
    expect(estimate.at).toBeUndefined();
    expect(estimate.basis).toMatch(/^no basis: 3 ahead of you and only 1 lease of iPhone 16/);
  });
});

describe('estimateGrant with no leases to wait for', () => {
  it('a model never granted: no basis', () => {
    const estimate = estimateGrant(input({}));
    expect(estimate.at).toBeUndefined();
    expect(estimate.basis).toMatch(/^no basis: /);
  });

  it('a fleet that is drained or away, not busy: no basis, whatever the history', () => {
    const history = { ...none, waitMs: [1000, 1000, 1000, 1000, 1000] };
    const estimate = estimateGrant(input({ capacityBlocked: 0, history }));
    expect(estimate.at).toBeUndefined();
    expect(estimate.basis).toMatch(/^no basis: no worker that would serve it is busy/);
  });

  it("the last hour's waits: within their range, from when it was queued", () => {
    const waits = [MIN, 2 * MIN, 2 * MIN, 3 * MIN, 4 * MIN, 5 * MIN];
    const estimate = estimateGrant(input({ history: { ...none, waitMs: waits } }));
    const queuedAt = NOW - 40_000;
    expect(estimate.at).toBeGreaterThanOrEqual(queuedAt + Math.min(...waits));
    expect(estimate.at).toBeLessThanOrEqual(queuedAt + Math.max(...waits));
    expect(estimate.basis).toBe(
      'iPhone 16 requests were granted in 2m30s (median of 6 in the last hour)',
    );
  });

  it('waited longer than the median already: no basis rather than a moment past', () => {
    const waits = [10_000, 10_000, 20_000, 20_000, 30_000];
    const estimate = estimateGrant(input({ history: { ...none, waitMs: waits } }));
    expect(estimate).toEqual({
      basis:
        'no basis: it has waited longer than iPhone 16 requests took in the last hour (median 20s)',
    });
  });

  it('too few waits: no basis', () => {
    expect(estimateGrant(input({ history: { ...none, waitMs: [MIN, MIN] } })).at).toBeUndefined();
  });
});

describe('median', () => {
  it('of odd and even counts, and none below the minimum', () => {
    expect(median([3, 1, 2], 1)).toBe(2);
    expect(median([4, 1, 3, 2], 1)).toBe(2.5);
    expect(median([1, 2], 3)).toBeUndefined();
  });
});
