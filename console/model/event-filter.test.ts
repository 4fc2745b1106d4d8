import { describe, expect, it } from 'vitest';
import { eventReasons, filterEvents } from './event-filter.js';
import type { EventRow } from './wire.js';

const event = (
  request: string,
  reason: string,
  message: string,
  at: string,
  namespace = 'team-a',
): EventRow => ({
  key: `${namespace}/${request}.${reason}`,
  namespace,
  request,
  type: reason === 'Failed' ? 'Warning' : 'Normal',
  reason,
  message,
  count: 1,
  firstAt: at,
  lastAt: at,
});

const events = [
  event('ci-1', 'Dispatched', 'Dispatched to worker-b (cold)', '2026-12-01T12:00:01Z'),
  event(
    'ci-1',
    'Granted',
    'Granted iPhone 16 on worker-a; dispatched to worker-a',
    '2026-12-01T12:00:03Z',
  ),
  event('ci-2', 'Failed', 'NO_CAPACITY: every worker …', '2026-12-01T12:00:02Z'),
  event('ci-3', 'Granted', 'Granted Pixel 8 on worker-ab', '2026-12-01T12:00:04Z', 'team-b'),
];
const workers = new Map([
  ['ns-worker-a', { name: 'ns-worker-a', label: 'worker-a' }],
  ['ns-worker-b', { name: 'ns-worker-b', label: 'worker-b' }],
]);
const requests = new Map([['team-b/ci-3', { worker: 'ns-worker-c' }]]);
const context = { workers, requests };
const keys = (list: EventRow[]) => list.map((entry) => `${entry.request} ${entry.reason}`);

describe('the Events filter', () => {
  it('shows every Event newest first with no filter', () => {
    expect(keys(filterEvents(events, {}, context))).toEqual([
      'ci-3 Granted',
      'ci-1 Granted',
      'ci-2 Failed',
      'ci-1 Dispatched',
    ]);
  });

  it('filters by reason, exactly', () => {
    expect(keys(filterEvents(events, { reason: 'Granted' }, context))).toEqual([
      'ci-3 Granted',
      'ci-1 Granted',
    ]);
    expect(eventReasons(events)).toEqual(['Dispatched', 'Failed', 'Granted']);
  });

  it('filters by part of the request, any case', () => {
    expect(keys(filterEvents(events, { request: 'TEAM-A/ci-1' }, context))).toEqual([
      'ci-1 Granted',
      'ci-1 Dispatched',
    ]);
    expect(keys(filterEvents(events, { request: 'team-b' }, context))).toEqual(['ci-3 Granted']);
  });

  it('filters by worker: named whole in the message by label or name, or the request on it', () => {
    expect(keys(filterEvents(events, { worker: 'ns-worker-a' }, context))).toEqual([
      'ci-1 Granted',
    ]);
    expect(keys(filterEvents(events, { worker: 'ns-worker-b' }, context))).toEqual([
      'ci-1 Dispatched',
    ]);
    expect(keys(filterEvents(events, { worker: 'ns-worker-c' }, context))).toEqual([
      'ci-3 Granted',
    ]);
  });

  it('combines the filters', () => {
    expect(
      keys(filterEvents(events, { worker: 'ns-worker-a', reason: 'Dispatched' }, context)),
    ).toEqual([]);
  });
});
