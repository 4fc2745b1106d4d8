// Prefer the worker with the most free running slots for the request: free on its platform and
// globally, whichever is fewer. Evictable slots do not count: using one costs an eviction.
// Virtual only: a physical device takes no running slot.
import { freeSlots } from '../../slots.js';
import type { RankStage } from '../types.js';

export const freeCapacity: RankStage = {
  name: 'free-capacity',
  kind: 'rank',
  appliesToPhysical: false,
  score(worker, request) {
    const capacity = worker.status?.capacity;
    const platform = capacity?.platforms[request.platform];
    if (capacity === undefined || platform === undefined) return 0;
    return Math.min(freeSlots(platform), freeSlots(capacity.global));
  },
};
