import { describe, expect, it } from 'vitest';
import { LeaseRequestStatus } from '../../api/index.js';
import { grantedStatus, waitingStatus, waitingWorkers } from './statuses.js';

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

  it('change about one worker in ten from one write to the next', () => {
    const before = waitingWorkers(1000, 1);
    const after = waitingWorkers(1000, 2);
    const changed = before.filter((entry, i) => JSON.stringify(entry) !== JSON.stringify(after[i]));
    expect(changed.length).toBeGreaterThanOrEqual(100);
    expect(changed.length).toBeLessThanOrEqual(200);
  });
});
