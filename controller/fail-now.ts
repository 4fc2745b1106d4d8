// When a request fails at once instead of waiting: the one home of that decision. A request fails
// on admission when the fleet table says no known worker serves it (DESIGN.md §4.1); while it
// waits, when no worker left could ever serve it (a worker said it cannot, or a physical request's
// last enrolled match is gone; §4.3, §3.3); and in any walk, when nothing takes it now and it may
// not wait. Everything else waits.
import {
  describeRequest,
  isCannotServeCode,
  noPhysicalMatch,
  type DeviceSpec,
  type ErrorBody,
} from '../api/index.js';
import type { Assessment, RoutingPolicy, WorkerView } from '../api/index.js';

/** On admission: the fleet table's verdict on the known workers as they are now. */
export function failOnAdmission(
  policy: RoutingPolicy,
  request: DeviceSpec,
  views: readonly WorkerView[],
): ErrorBody | undefined {
  const assessment = policy.assess(request, views);
  return assessment.kind === 'fail' ? errorOf(assessment) : undefined;
}

export interface CannotServeFacts {
  spec: DeviceSpec;
  /** The latest cannot-serve refusal a worker gave, to fail with when no one else can serve. */
  lastCannotServe?: { code: string; message: string } | undefined;
}

/**
 * While waiting: why no worker left (`others`, asked as if connected and undrained) could ever
 * serve the request, or undefined. The table's cannot-serve rows decide; no worker left at all
 * means the same for a request a worker refused (its code) and for a physical one (no enrolled
 * match). A worker whose view is not read yet might still serve.
 */
export function failWhileWaiting(
  request: CannotServeFacts,
  others: readonly WorkerView[],
  policy: RoutingPolicy,
): ErrorBody | undefined {
  const refusedWith = request.lastCannotServe;
  const assessment = policy.assess(request.spec, others);
  const tableSays = assessment.kind === 'fail' && isCannotServeCode(assessment.code);
  if (!tableSays && others.length > 0) return undefined;
  if (refusedWith && isCannotServeCode(refusedWith.code)) {
    return { code: refusedWith.code, message: refusedWith.message };
  }
  if (assessment.kind === 'fail' && tableSays) return errorOf(assessment);
  if (request.spec.physical !== true) return undefined;
  const { message, details } = noPhysicalMatch(request.spec);
  return { code: 'UNKNOWN_MODEL', message, details };
}

/** No worker takes a request that may not wait (`noWait`) in this walk. */
export function failUnlessWaiting(request: DeviceSpec): ErrorBody {
  return {
    code: 'NO_CAPACITY',
    message: `no worker can take ${describeRequest(request)} now, and the request may not wait`,
    details: { reason: 'no-free-worker' },
  };
}

function errorOf(assessment: Extract<Assessment, { kind: 'fail' }>): ErrorBody {
  return {
    code: assessment.code,
    message: assessment.message,
    ...(assessment.details ? { details: { ...assessment.details } } : {}),
  };
}
