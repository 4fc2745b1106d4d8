import { describe, expect, it } from 'vitest';
import {
  aWorker,
  freeSlots,
  globalFull,
  platformFull,
  requests,
} from '../../../test/fixtures/routing.js';
import { freeSlot } from './free-slot.js';

describe('free-slot', () => {
  it.each([
    {
      story: 'no free or evictable iOS slot',
      worker: aWorker('wrk-a', platformFull('ios')),
      capacityReason: 'platform-running-limit',
    },
    {
      story: 'no free iOS slot and none globally, naming the platform',
      worker: aWorker('wrk-a', platformFull('ios'), globalFull()),
      capacityReason: 'platform-running-limit',
    },
    {
      story: 'a free iOS slot but no free or evictable global slot',
      worker: aWorker('wrk-a', globalFull()),
      capacityReason: 'global-running-limit',
    },
  ])('drops a worker with $story as full', ({ worker, capacityReason }) => {
    expect(freeSlot.check(worker, requests.iphone)).toEqual({ reason: 'full', capacityReason });
  });

  it.each([
    {
      story: 'a free slot on the platform and globally',
      worker: aWorker('wrk-a', freeSlots('ios', 1)),
    },
    {
      story: 'a full platform with an evictable warm simulator',
      worker: aWorker('wrk-a', platformFull('ios', 1)),
    },
    {
      story: 'a full global limit with an evictable warm simulator',
      worker: aWorker('wrk-a', globalFull(1)),
    },
    { story: 'another platform full', worker: aWorker('wrk-a', platformFull('android')) },
  ])('keeps a worker with $story', ({ worker }) => {
    expect(freeSlot.check(worker, requests.iphone)).toBeUndefined();
  });
});
