// status.workers grouped by reason (ADR 0033): what the controller writes, read back per worker by
// every reader, and the items an older controller wrote (one worker each) still read and parse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPACITY_REASONS, WAITING_REASONS } from './reasons.js';
import { LeaseRequestStatus, type WorkerReason } from './schemas.js';
import { summarizeReasons } from './summary.js';
import { groupReasons, reasonsByWorker } from './worker-reasons.js';

const reasons: WorkerReason[] = [
  { worker: 'mac-a', reason: 'full', capacityReason: 'ram-budget' },
  { worker: 'mac-b', reason: 'drained' },
  { worker: 'mac-c', reason: 'full' },
  { worker: 'mac-d', reason: 'full', capacityReason: 'platform-running-limit' },
  { worker: 'mac-e', reason: 'drained' },
  { worker: 'mac-f', reason: 'full', capacityReason: 'ram-budget' },
];

describe('groupReasons', () => {
  it('writes an item per reason and capacity reason, in the reasons’ order, none first', () => {
    expect(groupReasons(reasons)).toEqual([
      { reason: 'drained', names: ['mac-b', 'mac-e'] },
      { reason: 'full', names: ['mac-c'] },
      { reason: 'full', capacityReason: 'platform-running-limit', names: ['mac-d'] },
      { reason: 'full', capacityReason: 'ram-budget', names: ['mac-a', 'mac-f'] },
    ]);
  });

  it('orders the items as the summary counts the reasons', () => {
    const all = WAITING_REASONS.map((reason, index) => ({
      worker: `w-${String(WAITING_REASONS.length - index).padStart(2, '0')}`,
      reason,
    }));
    expect(groupReasons(all).map((item) => item.reason)).toEqual([...WAITING_REASONS]);
    expect(summarizeReasons(all)).toBe(
      `13 workers: ${WAITING_REASONS.map((reason) => `1 ${reason}`).join(', ')}`,
    );
  });

  it('sorts each item’s names as the controller sorts workers (upper case before lower)', () => {
    const unsorted: WorkerReason[] = [
      { worker: 'mac-b', reason: 'busy' },
      { worker: 'Mac-z', reason: 'busy' },
      { worker: 'mac-a', reason: 'busy' },
    ];
    expect(groupReasons(unsorted)).toEqual([
      { reason: 'busy', names: ['Mac-z', 'mac-a', 'mac-b'] },
    ]);
  });

  it('writes no items for no workers', () => {
    expect(groupReasons([])).toEqual([]);
    expect(reasonsByWorker({ workers: [] })).toEqual([]);
  });

  it('writes what the schema accepts', () => {
    const status = { phase: 'Waiting', workers: groupReasons(reasons) };
    expect(LeaseRequestStatus.parse(status)).toEqual(status);
  });
});

describe('reasonsByWorker', () => {
  it('reads grouped items back one per worker, in worker name order', () => {
    expect(reasonsByWorker({ workers: groupReasons(reasons) })).toEqual(reasons);
  });

  it('reads items of one worker, as an older controller wrote them', () => {
    const legacy = [
      { worker: 'mac-b', reason: 'busy' as const },
      { worker: 'mac-a', reason: 'full' as const, capacityReason: 'disk-low' as const },
    ];
    expect(reasonsByWorker({ workers: legacy })).toEqual([
      { worker: 'mac-a', reason: 'full', capacityReason: 'disk-low' },
      { worker: 'mac-b', reason: 'busy' },
    ]);
  });

  it('reads both forms mixed in one list', () => {
    const status = LeaseRequestStatus.parse({
      phase: 'Waiting',
      workers: [
        { reason: 'drained', names: ['mac-c', 'mac-a'] },
        { worker: 'mac-b', reason: 'full', capacityReason: 'ram-budget' },
      ],
    });
    expect(reasonsByWorker(status)).toEqual([
      { worker: 'mac-a', reason: 'drained' },
      { worker: 'mac-b', reason: 'full', capacityReason: 'ram-budget' },
      { worker: 'mac-c', reason: 'drained' },
    ]);
  });

  it('reads no reasons from a status without workers, or no status', () => {
    expect(reasonsByWorker(undefined)).toEqual([]);
    expect(reasonsByWorker({})).toEqual([]);
  });

  it('gives back any reasons grouped, in name order', () => {
    const worker = fc.stringMatching(/^[a-zA-Z0-9][-a-zA-Z0-9.]{0,12}$/);
    const entry = fc.oneof(
      fc.record({ reason: fc.constantFrom(...WAITING_REASONS) }),
      fc.record({
        reason: fc.constant('full' as const),
        capacityReason: fc.constantFrom(...CAPACITY_REASONS),
      }),
    );
    const fleet = fc.uniqueArray(fc.tuple(worker, entry), {
      selector: ([name]) => name,
      maxLength: 40,
    });
    fc.assert(
      fc.property(fleet, (pairs) => {
        const perWorker: WorkerReason[] = pairs
          .map(([name, reason]) => ({ worker: name, ...reason }))
          .sort((a, b) => (a.worker < b.worker ? -1 : a.worker > b.worker ? 1 : 0));
        const items = groupReasons(perWorker);
        expect(reasonsByWorker({ workers: items })).toEqual(perWorker);
        expect(new Set(items.map((i) => `${i.reason} ${i.capacityReason}`)).size).toBe(
          items.length,
        );
      }),
    );
  });
});

describe('status.workers items', () => {
  const refusal = (item: Record<string, unknown>) =>
    LeaseRequestStatus.safeParse({ phase: 'Waiting', workers: [item] }).error?.issues.map(
      (issue) => issue.message,
    );
  const oneOf = 'an item of status.workers names its workers in exactly one of worker and names';

  it('name their workers in exactly one of worker and names', () => {
    expect(refusal({ reason: 'busy' })).toEqual([oneOf]);
    expect(refusal({ worker: 'mac-a', names: ['mac-b'], reason: 'busy' })).toEqual([oneOf]);
    expect(refusal({ names: [], reason: 'busy' })).toHaveLength(1);
    expect(refusal({ names: ['mac-a'], reason: 'busy' })).toBeUndefined();
  });

  it('carry a capacity reason only with full, in either form', () => {
    const onlyFull = ['capacityReason is allowed only with reason full'];
    expect(refusal({ names: ['mac-a'], reason: 'busy', capacityReason: 'ram-budget' })).toEqual(
      onlyFull,
    );
    expect(refusal({ worker: 'mac-a', reason: 'busy', capacityReason: 'ram-budget' })).toEqual(
      onlyFull,
    );
  });
});
