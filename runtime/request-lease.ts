// Where a request's Lease is: the namespace and name its status names (ADR 0034: a worker's Leases
// live in a namespace of the worker's own, each named by its request's UID), else where a
// controller before that put it, in the request's own namespace under the request's name. The
// proxy reads the Lease there (with its own credentials); people read the request instead.
import type { LeaseRequestObject } from '../api/index.js';

export interface LeaseCoordinates {
  namespace: string;
  name: string;
}

/** The coordinates of the Lease `request` holds (or held), as its status says them. */
export function leaseOfRequest(
  request: Pick<LeaseRequestObject, 'metadata' | 'status'>,
): LeaseCoordinates {
  return {
    namespace: request.status?.leaseNamespace ?? request.metadata.namespace ?? '',
    name: request.status?.lease ?? request.metadata.name,
  };
}
