import { describe, expect, it } from 'vitest';
import { aWorker, ownQueue, requests } from '../../../test/fixtures/routing.js';
import { idleQueue } from './idle-queue.js';

describe('idle-queue', () => {
  it('drops a worker with virtual requests waiting in its own queue as busy', () => {
    expect(idleQueue.check(aWorker('wrk-a', ownQueue(2)), requests.iphone)).toEqual({
      reason: 'busy',
    });
  });

  it.each([
    { story: 'a worker with an empty queue', worker: aWorker('wrk-a') },
    {
      story: 'a worker with only physical requests waiting',
      worker: aWorker('wrk-a', ownQueue(0, 3)),
    },
  ])('keeps $story', ({ worker }) => {
    expect(idleQueue.check(worker, requests.iphone)).toBeUndefined();
  });

  it('does not apply to physical requests: the agent matches its physical waiters itself', () => {
    expect(idleQueue.appliesToPhysical).toBe(false);
  });
});
