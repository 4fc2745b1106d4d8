import { describe, expect, it } from 'vitest';
import type { DeviceSpec, WorkerReason } from '../../api/index.js';
import { estimateQueue, settle, type HeldLease } from './queue-estimates.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const MIN = 60_000;
const iphone: DeviceSpec = { platform: 'ios', model: 'iPhone 16' };
const ipad: DeviceSpec = { platform: 'ios', model: 'iPad Air' };
const noHistory = () => ({ leaseMs: [], waitMs: [], readyMs: [] });
const full: WorkerReason[] = [
  { worker: 'worker-a', reason: 'full', capacityReason: 'platform-running-limit' },
  { worker: 'worker-b', reason: 'drained' },
];

describe('estimateQueue', () => {
  it('counts only competitors of its class ahead, and leases on the workers that are full', () => {
    const leases: HeldLease[] = [
      { worker: 'worker-a', spec: iphone, expiresAt: NOW + 4 * MIN, session: false },
      { worker: 'worker-a', spec: iphone, expiresAt: NOW + 2 * MIN, session: false },
      // On a drained worker: its end lets nothing run.
      { worker: 'worker-b', spec: iphone, expiresAt: NOW + MIN, session: false },
    ];
    const estimates = estimateQueue(
      [
        { key: 'ns/first', spec: iphone, queuedAt: NOW - 3000, workers: full },
        { key: 'ns/tablet', spec: ipad, queuedAt: NOW - 2000, workers: [] },
        { key: 'ns/second', spec: iphone, queuedAt: NOW - 1000, workers: full },
      ],
      leases,
      noHistory,
      NOW,
    );
    expect(estimates.get('ns/first')).toEqual({
      at: NOW + 2 * MIN,
      basis: '1 lease of iPhone 16 ends before',
    });
    expect(estimates.get('ns/second')).toEqual({
      at: NOW + 4 * MIN,
      basis: '2 leases of iPhone 16 end before; 1 ahead of you',
    });
    expect(estimates.get('ns/tablet')?.at).toBeUndefined();
  });

  it('requests with lists of their own wait on their own full workers, alike or not', () => {
    const leases: HeldLease[] = [
      { worker: 'worker-a', spec: iphone, expiresAt: NOW + 2 * MIN, session: false },
      { worker: 'worker-b', spec: iphone, expiresAt: NOW + MIN, session: true },
    ];
    const bothFull = (): WorkerReason[] => [
      { worker: 'worker-a', reason: 'full', capacityReason: 'platform-running-limit' },
      { worker: 'worker-b', reason: 'full', capacityReason: 'platform-running-limit' },
    ];
    const history = () => ({
      leaseMs: Array(5).fill(2 * MIN) as number[],
      waitMs: [],
      readyMs: [],
    });
    const estimates = estimateQueue(
      [
        { key: 'ns/first', spec: iphone, queuedAt: NOW - 3000, workers: bothFull() },
        // Worker b drained for it alone: only a's lease helps it.
        { key: 'ns/second', spec: iphone, queuedAt: NOW - 2000, workers: full },
        { key: 'ns/third', spec: iphone, queuedAt: NOW - 1000, workers: bothFull() },
      ],
      leases,
      history,
      NOW,
    );
    expect(estimates.get('ns/first')).toEqual({
      at: NOW + MIN,
      basis: '1 lease of iPhone 16 ends before (1 held by a session, which may end sooner)',
    });
    expect(estimates.get('ns/second')).toEqual({
      at: NOW + 4 * MIN,
      basis:
        '1 lease of iPhone 16 ends before; 1 ahead of you, each taken again for 2m (median lease of iPhone 16)',
    });
    expect(estimates.get('ns/third')).toEqual({
      at: NOW + 3 * MIN,
      basis:
        '2 leases of iPhone 16 end before (1 held by a session, which may end sooner); 2 ahead of you, each taken again for 2m (median lease of iPhone 16)',
    });
  });

  it('a running slot freed by a lease of another model: named by its platform', () => {
    const estimates = estimateQueue(
      [{ key: 'ns/r', spec: iphone, queuedAt: NOW, workers: full }],
      [{ worker: 'worker-a', spec: ipad, expiresAt: NOW + MIN, session: false }],
      noHistory,
      NOW,
    );
    expect(estimates.get('ns/r')).toEqual({
      at: NOW + MIN,
      basis: '1 iOS lease ends before',
    });
  });
});

describe('settle', () => {
  it('keeps the shown estimate while it only wobbles, takes the new one when it moves', () => {
    const shown = { at: NOW + 10 * MIN, basis: 'b' };
    expect(settle(shown, { at: NOW + 10 * MIN + 4000, basis: 'b' }, NOW)).toBe(shown);
    expect(settle(shown, { at: NOW + 12 * MIN, basis: 'b' }, NOW)).toEqual({
      at: NOW + 12 * MIN,
      basis: 'b',
    });
    expect(settle(shown, { at: NOW + 10 * MIN, basis: 'c' }, NOW).basis).toBe('c');
  });

  it('rounds up to whole seconds', () => {
    expect(settle(undefined, { at: NOW + 1200, basis: 'b' }, NOW)).toEqual({
      at: NOW + 2000,
      basis: 'b',
    });
  });
});
