// The Lease a dispatch makes (pure): where it is (its worker's namespace, named by its request's
// UID; ADR 0034) and what it says. The lease dispatcher (lease-dispatcher.ts) writes it.
import {
  API_VERSION,
  LEASE_FINALIZER,
  REQUEST_NAMESPACE_LABEL,
  RESOURCES,
  WORKER_LABEL,
  leaseNamespaceOf,
  type DeviceSpec,
  type LeaseRequestSpec,
} from '../api/index.js';

export interface DispatchedRequest {
  name: string;
  namespace: string;
  uid: string;
  spec: LeaseRequestSpec;
}

/** Where a Lease is: its namespace and name. */
export interface LeasePlace {
  namespace: string;
  name: string;
}

/** Where the Lease of `request` dispatched to `worker` is made: the worker's namespace, its UID. */
export function leasePlaceOf(request: { uid: string }, worker: string): LeasePlace {
  return { namespace: leaseNamespaceOf(worker), name: request.uid };
}

/**
 * The Lease that dispatches `request` to `worker`, expiring `durationSeconds` from `now`, or
 * `maxLeaseMs` from it when the request asks for more.
 */
export function leaseFor(
  request: DispatchedRequest,
  worker: string,
  now: number,
  maxLeaseMs = Infinity,
): object {
  const spec = request.spec;
  const durationSeconds = Math.min(spec.durationSeconds, Math.floor(maxLeaseMs / 1000));
  const device: DeviceSpec = { platform: spec.platform };
  if (spec.model !== undefined) device.model = spec.model;
  if (spec.class !== undefined) device.class = spec.class;
  if (spec.os !== undefined) device.os = spec.os;
  if (spec.physical !== undefined) device.physical = spec.physical;
  if (spec.requires !== undefined) device.requires = spec.requires;
  return {
    apiVersion: API_VERSION,
    kind: RESOURCES.lease.kind,
    metadata: {
      ...leasePlaceOf(request, worker),
      labels: { [WORKER_LABEL]: worker, [REQUEST_NAMESPACE_LABEL]: request.namespace },
      // The agent's finalizer from the start: its grant is then one status write, and a granted
      // Lease cannot go before its device is reclaimed. No ownerReference: the request is in
      // another namespace; the request's release finalizer deletes its Lease (ADR 0031, 0034).
      finalizers: [LEASE_FINALIZER],
    },
    spec: {
      worker,
      request: { namespace: request.namespace, name: request.name, uid: request.uid },
      device,
      expiresAt: new Date(now + durationSeconds * 1000).toISOString(),
      durationSeconds,
      ...(spec.holder ? { holder: spec.holder } : {}),
    },
  };
}
