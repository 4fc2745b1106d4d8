// Which changes of a waiting request's status are about presence (a worker away, or back), and
// which write lane each change of a status goes in.
import { describe, expect, it } from 'vitest';
import type { WorkerReason } from '../api/index.js';
import { desiredStatus, presenceChanged, presencePart, writeLaneFor } from './status.js';

const waiting = (...reasons: [string, string][]) => ({
  phase: 'Waiting',
  workers: reasons.map(([worker, reason]) => ({ worker, reason })),
});

const grouped = (...items: [string, ...string[]][]) => ({
  phase: 'Waiting',
  workers: items.map(([reason, ...names]) => ({ reason, names })),
});

describe('desiredStatus', () => {
  const reasons: WorkerReason[] = [
    { worker: 'a', reason: 'full', capacityReason: 'ram-budget' },
    { worker: 'b', reason: 'drained' },
    { worker: 'c', reason: 'full', capacityReason: 'ram-budget' },
  ];
  const waitingState = (workers: readonly WorkerReason[]) => ({
    life: { kind: 'waiting' as const },
    workers,
    conditions: [],
  });

  it('writes a waiting request’s reasons grouped by reason, its summary per worker', () => {
    expect(desiredStatus(waitingState(reasons))).toEqual({
      phase: 'Waiting',
      workers: [
        { reason: 'drained', names: ['b'] },
        { reason: 'full', capacityReason: 'ram-budget', names: ['a', 'c'] },
      ],
      summary: '3 workers: 1 drained, 2 full',
    });
  });

  it('groups a list of reasons that requests share once', () => {
    const first = desiredStatus(waitingState(reasons)).workers;
    expect(desiredStatus(waitingState(reasons)).workers).toBe(first);
    expect(desiredStatus(waitingState([...reasons])).workers).not.toBe(first);
  });
});

describe('presencePart', () => {
  it('names the workers said to be disconnected, in name order', () => {
    expect(presencePart(waiting(['b', 'disconnected'], ['a', 'full'], ['c', 'disconnected']))).toBe(
      'b c',
    );
    expect(presencePart(waiting(['a', 'full']))).toBe('');
  });

  it('reads grouped items, and items of one worker an older controller wrote', () => {
    expect(presencePart(grouped(['disconnected', 'c', 'b'], ['full', 'a']))).toBe('b c');
    const older = waiting(['b', 'disconnected'], ['a', 'full'], ['c', 'disconnected']);
    expect(presenceChanged(older, grouped(['disconnected', 'b', 'c'], ['full', 'a']))).toBe(false);
  });

  it('is undefined for a status without reasons', () => {
    expect(presencePart({ phase: 'Dispatched', worker: 'a' })).toBeUndefined();
    expect(presencePart(undefined)).toBeUndefined();
  });
});

describe('presenceChanged', () => {
  it('is a worker going away or coming back between two waiting statuses', () => {
    const before = waiting(['a', 'full'], ['b', 'not-chosen']);
    expect(presenceChanged(before, waiting(['a', 'full'], ['b', 'disconnected']))).toBe(true);
    expect(presenceChanged(waiting(['a', 'disconnected']), waiting(['a', 'full']))).toBe(true);
  });

  it('is not a position or another reason that moved', () => {
    const before = { ...waiting(['a', 'full'], ['b', 'disconnected']), position: 2 };
    const after = { ...waiting(['a', 'not-chosen'], ['b', 'disconnected']), position: 1 };
    expect(presenceChanged(before, after)).toBe(false);
  });

  it('is not a request’s first reasons', () => {
    expect(presenceChanged({ phase: 'Pending' }, waiting(['a', 'disconnected']))).toBe(false);
    expect(presenceChanged(undefined, waiting(['a', 'disconnected']))).toBe(false);
  });
});

describe('writeLaneFor', () => {
  it('puts an outcome in the outcome lane, even beside a worker going away', () => {
    const before = waiting(['a', 'full']);
    expect(writeLaneFor(before, { phase: 'Granted', lease: 'l', device: { id: 'd' } })).toBe(
      'outcome',
    );
    expect(writeLaneFor(undefined, { phase: 'Failed', error: { code: 'TIMEOUT' } })).toBe(
      'outcome',
    );
  });

  it('puts a worker that went away or came back in the presence lane', () => {
    const before = waiting(['a', 'full'], ['b', 'not-chosen']);
    expect(writeLaneFor(before, waiting(['a', 'full'], ['b', 'disconnected']))).toBe('presence');
    expect(writeLaneFor(waiting(['b', 'disconnected']), waiting(['b', 'full']))).toBe('presence');
  });

  it('puts a granted device that starts or ends its recovery in the presence lane', () => {
    const granted = { phase: 'Granted', lease: 'l', device: { id: 'd' } };
    const crashed = { type: 'DeviceRecovering', status: 'True', lastTransitionTime: 't0' };
    const recovering = { ...granted, recovery: { since: 't0' }, conditions: [crashed] };
    const back = { ...granted, conditions: [{ ...crashed, status: 'False' }] };
    expect(writeLaneFor(granted, recovering)).toBe('presence');
    expect(writeLaneFor(recovering, back)).toBe('presence');
    // A new estimate for the same recovery is progress.
    const later = { ...recovering, recovery: { since: 't0', estimatedSeconds: 60 } };
    expect(writeLaneFor(recovering, later)).toBe('progress');
  });

  it('puts a position that moved, and a request’s first reasons, in the progress lane', () => {
    const before = { ...waiting(['a', 'full']), position: 2 };
    expect(writeLaneFor(before, { ...waiting(['a', 'full']), position: 1 })).toBe('progress');
    expect(writeLaneFor({ phase: 'Pending' }, waiting(['a', 'disconnected']))).toBe('progress');
  });
});
