// Only a running agent is sent requests; a starting or unhealthy one is passed over.
import type { FilterStage } from '../types.js';

export const healthy: FilterStage = {
  name: 'healthy',
  kind: 'filter',
  appliesToPhysical: true,
  check(worker) {
    return worker.status?.health === 'running' ? undefined : { reason: 'unhealthy' };
  },
};
