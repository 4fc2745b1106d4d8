import { describe, expect, it } from 'vitest';
import { LeaseRequestStatus, reasonsByWorker, type WorkerReason } from '../../api/index.js';
import {
  grantedStatus,
  groupWorkers,
  productWaitingStatus,
  waitingGroupedStatus,
  waitingStatus,
  waitingWorkers,
} from './statuses.js';

describe('benchmark statuses', () => {
  it('are statuses the schema accepts, with full workers carrying a capacity reason', () => {
    for (const write of [0, 1, 2, 3]) {
      const status = LeaseRequestStatus.parse(waitingStatus(1000, write, 7));
      const full = (status.workers ?? []).filter((entry) => entry.reason === 'full');
      expect(full.length).toBeGreaterThan(200);
      expect(full.every((entry) => entry.capacityReason !== undefined)).toBe(true);
    }
    expect(LeaseRequestStatus.parse(grantedStatus('r-0001', 'mac-mini-0001')).workers).toBe(
      undefined,
    );
  });

  it("as the controller writes them carry each worker's reason grouped in status.workers", () => {
    const status = LeaseRequestStatus.parse(productWaitingStatus(1000));
    expect(status.workers?.length).toBeLessThan(20);
    expect([...reasonsByWorker(status)].sort((a, b) => a.worker.localeCompare(b.worker))).toEqual(
      waitingWorkers(1000, 0),
    );
  });

  it('change about one worker in ten from one write to the next', () => {
    const before = waitingWorkers(1000, 1);
    const after = waitingWorkers(1000, 2);
    const changed = before.filter((entry, i) => JSON.stringify(entry) !== JSON.stringify(after[i]));
    expect(changed.length).toBeGreaterThanOrEqual(100);
    expect(changed.length).toBeLessThanOrEqual(200);
  });
});

describe('grouped benchmark statuses', () => {
  it('group the same reasons by reason then capacity reason, names in order', () => {
    const entries: WorkerReason[] = [
      { worker: 'a', reason: 'full', capacityReason: 'ram-budget' },
      { worker: 'b', reason: 'busy' },
      { worker: 'c', reason: 'drained' },
      { worker: 'd', reason: 'full' },
      { worker: 'e', reason: 'full', capacityReason: 'platform-running-limit' },
      { worker: 'f', reason: 'busy' },
      { worker: 'g', reason: 'full', capacityReason: 'ram-budget' },
    ];
    expect(groupWorkers(entries)).toEqual([
      { reason: 'drained', workers: ['c'] },
      { reason: 'busy', workers: ['b', 'f'] },
      { reason: 'full', workers: ['d'] },
      { reason: 'full', capacityReason: 'platform-running-limit', workers: ['e'] },
      { reason: 'full', capacityReason: 'ram-budget', workers: ['a', 'g'] },
    ]);
  });

  it('carry every worker once with the reason waitingWorkers gives, the rest as waitingStatus', () => {
    for (const write of [0, 1, 2, 3]) {
      const grouped = waitingGroupedStatus(1000, write, 7);
      const { workers, ...rest } = waitingStatus(1000, write, 7);
      expect(grouped).not.toHaveProperty('workers');
      expect({ ...grouped, workerGroups: undefined }).toEqual({ ...rest, workerGroups: undefined });
      const ungrouped = grouped.workerGroups
        .flatMap(({ workers: names, ...reason }) => names.map((worker) => ({ worker, ...reason })))
        .sort((a, b) => a.worker.localeCompare(b.worker));
      expect(ungrouped).toEqual(workers);
      // Every group obeys the rule the item has: a capacity reason only with reason full.
      for (const group of grouped.workerGroups)
        expect(group.capacityReason === undefined || group.reason === 'full').toBe(true);
      // No two groups of the same reason and capacity reason.
      const keys = grouped.workerGroups.map((g) => `${g.reason}/${g.capacityReason ?? ''}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });
});
