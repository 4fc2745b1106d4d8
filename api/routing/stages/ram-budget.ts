// Prefer a worker below its RAM budget for the platform: one at its budget must evict before it
// boots, and may refuse. Virtual only: a physical device takes no RAM on the host.
import type { DeviceSpec } from '../../index.js';
import type { RankStage, WorkerView } from '../types.js';

function atRamBudget(worker: WorkerView, request: DeviceSpec): boolean {
  return worker.status?.capacity?.platforms[request.platform]?.atRamBudget === true;
}

export const ramBudget: RankStage = {
  name: 'ram-budget',
  kind: 'rank',
  appliesToPhysical: false,
  score(worker, request) {
    return atRamBudget(worker, request) ? 0 : 1;
  },
  zeroReason(worker, request) {
    return atRamBudget(worker, request)
      ? { reason: 'full', capacityReason: 'ram-budget' }
      : undefined;
  },
};
