// A worker with requests waiting in its own queue serves those first. Virtual only: queueDepth
// counts the agent's virtual waiters, and the agent matches its physical waiters per device itself.
import type { FilterStage } from '../types.js';

export const idleQueue: FilterStage = {
  name: 'idle-queue',
  kind: 'filter',
  appliesToPhysical: false,
  check(worker) {
    return (worker.status?.queueDepth ?? 0) > 0 ? { reason: 'busy' } : undefined;
  },
};
