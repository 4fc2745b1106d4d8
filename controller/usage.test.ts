import { describe, expect, it } from 'vitest';
import { iosStatus, iphoneSimulator, physicalIphone } from '../test/fixtures/workers.js';
import type { WorkerView } from '../api/index.js';
import {
  endWritten,
  leaseEnded,
  UsageLabels,
  waitWritten,
  type UsageFacts,
  type WrittenStatus,
} from './usage.js';

const T0 = Date.parse('2026-12-01T12:00:00Z');
const at = (seconds: number) => T0 + seconds * 1000;
const iso = (seconds: number) => new Date(at(seconds)).toISOString();

const views: WorkerView[] = [
  {
    name: 'a',
    connection: 'connected',
    drained: false,
    status: iosStatus({ devices: [physicalIphone()] }),
  },
];
const labels = () => new UsageLabels(() => views);

const facts = (overrides: Partial<UsageFacts> = {}): UsageFacts => ({
  namespace: 'team-a',
  platform: 'ios',
  model: 'iphone 16',
  createdAt: at(0),
  ...overrides,
});

const pending: WrittenStatus = { phase: 'Pending' };
const waiting: WrittenStatus = { phase: 'Waiting' };
const grantedAt = (seconds: number): WrittenStatus => ({
  phase: 'Granted',
  conditions: [
    {
      type: 'Granted',
      status: 'True',
      reason: 'Granted',
      message: '',
      lastTransitionTime: iso(seconds),
    },
  ],
});
const releasedAt = (seconds: number, reason: string): WrittenStatus => ({
  phase: 'Released',
  conditions: [
    { type: 'Granted', status: 'False', reason, message: '', lastTransitionTime: iso(seconds) },
  ],
});

/**
 * The observations of a request's writes, in order, as the status writer makes them: each write
 * replaces the one before it on the server.
 */
function observe(writes: WrittenStatus[], request: UsageFacts, bound = labels()) {
  const seen: string[] = [];
  let before: WrittenStatus | undefined = writes[0];
  for (const after of writes.slice(1)) {
    const wait = waitWritten(before, after, request, bound, at(999));
    if (wait) seen.push(`wait ${wait.seconds}s ${JSON.stringify(wait.labels)}`);
    const end = endWritten(before, after, request, bound, at(999));
    if (end) seen.push(`lease ${end.seconds}s ${JSON.stringify(end.labels)}`);
    before = after;
  }
  return seen;
}

describe('the wait and the lease, observed from the writes that made them', () => {
  it('observes the wait once, at the write that grants, and the lease once, at the write that releases', () => {
    const request = facts({ grantedAt: at(42), deviceModel: 'iPhone 16' });
    expect(
      observe(
        [
          pending,
          waiting,
          { phase: 'Dispatched' },
          grantedAt(42),
          grantedAt(42),
          releasedAt(642, 'Expired'),
        ],
        request,
      ),
    ).toEqual([
      'wait 42s {"platform":"ios","model":"iPhone 16","namespace":"team-a"}',
      'lease 600s {"platform":"ios","model":"iPhone 16","reason":"Expired"}',
    ]);
  });

  it('observes both when the grant and the release went to the server in one write', () => {
    const request = facts({ grantedAt: at(5), deviceModel: 'iPhone 16' });
    expect(observe([waiting, releasedAt(65, 'LeaseDeleted')], request)).toEqual([
      'wait 5s {"platform":"ios","model":"iPhone 16","namespace":"team-a"}',
      'lease 60s {"platform":"ios","model":"iPhone 16","reason":"LeaseDeleted"}',
    ]);
  });

  it('observes no wait for a request granted before this process (a restart, a new leader); its lease from the status', () => {
    // This process never saw the grant: the Granted condition written earlier says when it was.
    const request = facts({ deviceModel: 'iPhone 16' });
    expect(observe([grantedAt(30), grantedAt(30), releasedAt(90, 'HolderGone')], request)).toEqual([
      'lease 60s {"platform":"ios","model":"iPhone 16","reason":"HolderGone"}',
    ]);
  });

  it('observes nothing for a request that failed, nor for one found released', () => {
    const failed: WrittenStatus = { phase: 'Failed' };
    expect(observe([pending, waiting, failed], facts())).toEqual([]);
    expect(observe([releasedAt(10, 'Expired'), releasedAt(10, 'Expired')], facts())).toEqual([]);
  });

  it('bounds the end reason; a deleted request ends RequestDeleted', () => {
    const request = facts({ grantedAt: at(0) });
    expect(observe([grantedAt(0), releasedAt(1, 'SomethingNew')], request)).toEqual([
      'lease 1s {"platform":"ios","model":"iPhone 16","reason":"other"}',
    ]);
    expect(leaseEnded(request, 'RequestDeleted', at(0), at(3), labels())?.labels.reason).toBe(
      'RequestDeleted',
    );
  });

  it('names no lease whose start is unknown', () => {
    expect(leaseEnded(facts(), 'Expired', undefined, at(3), labels())).toBeUndefined();
  });
});

describe('label bounds', () => {
  it('names a model as the fleet spells it, from catalogs and devices; other for any other; any for none', () => {
    const bound = labels();
    expect(bound.model('IPHONE 16')).toBe('iPhone 16');
    expect(bound.model('iphone 15 pro')).toBe('iPhone 15 Pro');
    expect(bound.model('Nokia 3310')).toBe('other');
    expect(bound.model(undefined)).toBe('any');
  });

  it('follows the fleet as it changes', () => {
    let fleet: WorkerView[] = [];
    const bound = new UsageLabels(() => fleet);
    expect(bound.model('Pixel 9')).toBe('other');
    fleet = [
      {
        name: 'b',
        connection: 'connected',
        drained: false,
        status: iosStatus({ devices: [iphoneSimulator('s1', { model: 'Pixel 9' })] }),
      },
    ];
    expect(bound.model('pixel 9')).toBe('Pixel 9');
  });

  it('names the first namespaces it sees, then other', () => {
    const bound = new UsageLabels(() => views, 2);
    expect(['a', 'b', 'c', 'a', 'b', 'd'].map((ns) => bound.namespace(ns))).toEqual([
      'a',
      'b',
      'other',
      'a',
      'b',
      'other',
    ]);
  });
});
