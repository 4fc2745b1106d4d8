// Does the worker take requests at all? Connection first, so a worker both disconnected and
// drained reads `disconnected`: reconnecting is what it needs first.
import type { FilterStage } from '../types.js';

export const takesRequests: FilterStage = {
  name: 'takes-requests',
  kind: 'filter',
  appliesToPhysical: true,
  check(worker) {
    if (worker.connection === 'disconnected') return { reason: 'disconnected' };
    if (worker.connection === 'incompatible') return { reason: 'incompatible' };
    if (worker.drained) return { reason: 'drained' };
    // Without its catalog and capacity the agent has not read its drivers yet: nothing to route on.
    const status = worker.status;
    if (status?.catalog === undefined || status.capacity === undefined) {
      return { reason: 'not-ready' };
    }
    return undefined;
  },
};
