import { describe, expect, it } from 'vitest';
import {
  aWorker,
  freeSlots,
  globalFull,
  platformFull,
  requests,
} from '../../../test/fixtures/routing.js';
import { freeCapacity } from './free-capacity.js';

describe('free-capacity', () => {
  it.each([
    { story: 'all four iOS slots free', worker: aWorker('wrk-a'), score: 4 },
    { story: 'one iOS slot free', worker: aWorker('wrk-a', freeSlots('ios', 1)), score: 1 },
    {
      story: 'a full platform, even with an evictable simulator',
      worker: aWorker('wrk-a', platformFull('ios', 2)),
      score: 0,
    },
    {
      story: 'free iOS slots but a full global limit',
      worker: aWorker('wrk-a', globalFull(1)),
      score: 0,
    },
    { story: 'another platform full', worker: aWorker('wrk-a', platformFull('android')), score: 4 },
  ])('scores a worker with $story: $score', ({ worker, score }) => {
    expect(freeCapacity.score(worker, requests.iphone)).toBe(score);
  });

  it('gives no zero reason: few free slots are not a reason a worker cannot take it', () => {
    expect(freeCapacity.zeroReason).toBeUndefined();
  });
});
