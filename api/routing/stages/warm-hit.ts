// Prefer a worker that can hand over a device at once. Virtual: a ready simulator of the request's
// model (and class and OS) is already booted. Physical: a pickable match, i.e. a ready enrolled
// device not last read as not present; this is the only rank a physical request has, so a worker
// without one says why.
import type { DeviceSpec } from '../../lease-request-schema.js';
import { fitsDevice, physicalMatch } from '../../match.js';
import type { RankStage, WorkerView } from '../types.js';

function hasWarmDevice(worker: WorkerView, request: DeviceSpec): boolean {
  const devices = worker.status?.devices ?? [];
  if (request.physical === true) return physicalMatch({ devices }, request, 'pickable');
  return devices.some(
    (device) => !device.physical && device.state === 'ready' && fitsDevice(request, device),
  );
}

export const warmHit: RankStage = {
  name: 'warm-hit',
  kind: 'rank',
  appliesToPhysical: true,
  score(worker, request) {
    return hasWarmDevice(worker, request) ? 1 : 0;
  },
  zeroReason(worker, request) {
    // A virtual request can still boot a cold simulator, so 0 says nothing against the worker.
    if (request.physical !== true || hasWarmDevice(worker, request)) return undefined;
    return { reason: 'no-free-physical' };
  },
};
