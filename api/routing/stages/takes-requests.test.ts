import { describe, expect, it } from 'vitest';
import {
  aWorker,
  capacityNotRead,
  catalogNotRead,
  disconnected,
  drained,
  health,
  incompatible,
  requests,
  unread,
} from '../../../test/fixtures/routing.js';
import { takesRequests } from './takes-requests.js';

describe('takes-requests', () => {
  it.each([
    {
      story: 'a worker whose heartbeat lapsed',
      worker: aWorker('wrk-a', disconnected),
      reason: 'disconnected',
    },
    {
      story: 'a worker outside the protocol range',
      worker: aWorker('wrk-a', incompatible),
      reason: 'incompatible',
    },
    { story: 'a drained worker', worker: aWorker('wrk-a', drained), reason: 'drained' },
    {
      story: 'a worker both disconnected and drained, as disconnected',
      worker: aWorker('wrk-a', drained, disconnected),
      reason: 'disconnected',
    },
    {
      story: 'a worker both incompatible and drained, as incompatible',
      worker: aWorker('wrk-a', drained, incompatible),
      reason: 'incompatible',
    },
    {
      story: 'a connected worker whose agent wrote no status yet',
      worker: aWorker('wrk-a', unread),
      reason: 'not-ready',
    },
    {
      story: 'a connected worker whose catalog is not read',
      worker: aWorker('wrk-a', catalogNotRead),
      reason: 'not-ready',
    },
    {
      story: 'a connected worker whose capacity is not read',
      worker: aWorker('wrk-a', capacityNotRead),
      reason: 'not-ready',
    },
  ])('drops $story', ({ worker, reason }) => {
    expect(takesRequests.check(worker, requests.iphone)).toEqual({ reason });
  });

  it.each([
    { story: 'a connected, undrained worker with its view read', worker: aWorker('wrk-a') },
    // Health is the healthy stage's business: a starting agent with a catalog still takes requests.
    {
      story: 'a starting worker that has read its catalog and capacity',
      worker: aWorker('wrk-a', health('starting')),
    },
  ])('keeps $story', ({ worker }) => {
    expect(takesRequests.check(worker, requests.iphone)).toBeUndefined();
    expect(takesRequests.check(worker, requests.physicalIphone)).toBeUndefined();
  });
});
