// A new simulator needs a running slot on the request's platform and one globally; a slot counts
// as free when running is below the limit, or when an idle warm simulator could be evicted.
// Virtual only: a physical device takes no running slot.
import { hasRoom } from '../../slots.js';
import type { FilterStage } from '../types.js';

export const freeSlot: FilterStage = {
  name: 'free-slot',
  kind: 'filter',
  appliesToPhysical: false,
  check(worker, request) {
    const capacity = worker.status?.capacity;
    // The platform's limit is the nearer one, so it is named even when global is full too.
    if (!hasRoom(capacity?.platforms[request.platform])) {
      return { reason: 'full', capacityReason: 'platform-running-limit' };
    }
    if (!hasRoom(capacity?.global)) {
      return { reason: 'full', capacityReason: 'global-running-limit' };
    }
    return undefined;
  },
};
