// Can the worker's catalog (or, for a physical request, its enrolled devices) serve the request at
// all? The fleet table (assess.ts) asks this same stage, so the order of the checks and the helpers
// from api/ that decide them live here only.
import { hasPlatform, hasRuntime, listsModel, physicalMatch } from '../../match.js';
import type { FilterStage } from '../types.js';

/** The reasons can-serve gives, in the order it checks them. */
export const CAN_SERVE_REASONS = ['no-driver', 'unknown-model', 'runtime-missing'] as const;

export const canServe: FilterStage = {
  name: 'can-serve',
  kind: 'filter',
  appliesToPhysical: true,
  check(worker, request) {
    // A worker whose catalog is not read serves nothing we know of.
    const catalog = worker.status?.catalog;
    if (catalog === undefined || !hasPlatform(catalog, request)) return { reason: 'no-driver' };
    if (request.physical === true) {
      // Physical: a device enrolled on the worker must match; the catalog's models and runtimes
      // are the simulators', so they play no part.
      return physicalMatch(worker.status ?? { devices: [] }, request, 'enrolled')
        ? undefined
        : { reason: 'unknown-model' };
    }
    if (!listsModel(catalog, request)) return { reason: 'unknown-model' };
    if (!hasRuntime(catalog, request)) return { reason: 'runtime-missing' };
    return undefined;
  },
};
