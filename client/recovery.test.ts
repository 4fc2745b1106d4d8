import { describe, expect, it } from 'vitest';
import type { Condition, LeaseRequestObject } from '../api/index.js';
import { RecoveryTracker } from './recovery.js';

const device = {
  id: 'sim-1',
  name: 'iPhone 16',
  model: 'iPhone 16',
  platform: 'ios' as const,
  os: '18.4',
  physical: false,
};
const recovery = { since: 't1', cause: 'shut down', crashes: 1, crashBudget: 3 };
const condition = (status: 'True' | 'False', at: string): Condition => ({
  type: 'DeviceRecovering',
  status,
  reason: status === 'True' ? 'DeviceCrashed' : 'DeviceRecovered',
  message: '',
  lastTransitionTime: at,
});

function granted(extra: Partial<NonNullable<LeaseRequestObject['status']>> = {}) {
  return {
    metadata: { name: 'ci-1' },
    spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds: 3600 },
    status: { phase: 'Granted', device, ...extra },
  } as LeaseRequestObject;
}

describe('what a holder is told of its device’s recovery', () => {
  it('tells a crash once, a new crash again, and the end once', () => {
    const tracker = new RecoveryTracker();
    expect(tracker.see(granted())).toBeUndefined();
    const crashed = granted({ recovery, conditions: [condition('True', 't1')] });
    expect(tracker.see(crashed)).toMatchObject({
      kind: 'recovering',
      text: 'device iPhone 16 (sim-1) crashed (shut down): booting it again',
    });
    expect(tracker.see(crashed)).toBeUndefined();
    const back = granted({ conditions: [condition('False', 't2')] });
    expect(tracker.see(back)).toMatchObject({
      kind: 'recovered',
      text: 'device iPhone 16 (sim-1) is back after its crash (shut down)',
    });
    expect(tracker.see(back)).toBeUndefined();
    const again = { ...recovery, since: 't3', crashes: 2 };
    expect(tracker.see(granted({ recovery: again }))).toMatchObject({ kind: 'recovering' });
  });

  it('an end seen first is old news; one that began and ended between two looks is news', () => {
    const late = new RecoveryTracker();
    expect(late.see(granted({ conditions: [condition('False', 't2')] }))).toBeUndefined();
    expect(late.see(granted({ conditions: [condition('False', 't4')] }))).toMatchObject({
      kind: 'recovered',
      text: 'device iPhone 16 (sim-1) is back after its crash',
    });
  });
});
