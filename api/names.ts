// Names of the API group, its resources, and the labels and finalizers simlock puts on objects.

export const GROUP = 'simlock.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** simlock's own version: package.json's (a unit test keeps the two the same). */
export const SIMLOCK_VERSION = '0.1.0';

export const RESOURCES = {
  worker: { kind: 'Worker', plural: 'workers', singular: 'worker', shortNames: ['wk'] },
  leaseRequest: {
    kind: 'LeaseRequest',
    plural: 'leaserequests',
    singular: 'leaserequest',
    shortNames: ['lr'],
  },
  lease: { kind: 'Lease', plural: 'leases', singular: 'lease', shortNames: ['dl'] },
} as const;

/**
 * Label on a simlock Lease naming the worker it was dispatched to (for the controller and people),
 * and on that worker's Lease namespace.
 */
export const WORKER_LABEL = 'simlock.dev/worker';
/**
 * A Lease's field naming its worker, selectable (the Lease CRD's selectableFields, Kubernetes
 * 1.32+): each agent watches its Leases by `spec.worker=<name>`, which kube-apiserver matches more
 * cheaply than the label (ADR 0018).
 */
export const LEASE_WORKER_FIELD = 'spec.worker';
/** Finalizer the controller puts on a LeaseRequest so that deleting it releases its Lease first. */
export const REQUEST_FINALIZER = 'simlock.dev/release';
/** Finalizer on a Lease that the agent removes once it has reclaimed the device. */
export const LEASE_FINALIZER = 'simlock.dev/reclaim';
/**
 * Annotation the controller puts on a Lease it withdraws (in the write that takes the agent's
 * finalizer off, before it deletes the Lease): an agent never answers such a Lease.
 */
export const LEASE_WITHDRAWN_ANNOTATION = 'simlock.dev/withdrawn';

/** Whether a Lease carries the withdrawn mark (its metadata). */
export function isWithdrawn(metadata: {
  annotations?: Record<string, string> | undefined;
}): boolean {
  return metadata.annotations?.[LEASE_WITHDRAWN_ANNOTATION] !== undefined;
}

/** The coordination.k8s.io Lease an agent renews as its heartbeat. */
export function heartbeatLeaseName(worker: string): string {
  return `worker-${worker}`;
}

/** The range of agent protocol versions this release of the controller understands. */
export const PROTOCOL = { current: 1, min: 1, max: 1 } as const;
