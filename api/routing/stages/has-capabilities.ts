// Every capability the request requires must be listed as available by the worker.
import type { FilterStage } from '../types.js';

export const hasCapabilities: FilterStage = {
  name: 'has-capabilities',
  kind: 'filter',
  appliesToPhysical: true,
  check(worker, request) {
    const offered = worker.status?.capabilities ?? [];
    const missing = (request.requires ?? []).some(
      (required) =>
        !offered.some((capability) => capability.name === required && capability.available),
    );
    return missing ? { reason: 'capability-missing' } : undefined;
  },
};
