// Extending a lease: grow the request's spec.durationSeconds (the one field of its spec that may
// change, and only upwards; CEL), then wait until the controller has moved the Lease's expiresAt,
// which its agent honours (ADR 0008).
import { LeaseObject, LeaseRequestObject, SimlockError } from '../api/index.js';
import { isNotFound, simlockPath, type KubeClient } from '../runtime/index.js';
import { getObject } from './kube.js';

const WAIT_MS = 15_000;

/** By so many seconds from the current expiry, or until a time. */
export type ExtendBy = { bySeconds: number } | { until: Date };

export interface Extended {
  /** The new expiry (RFC 3339). */
  expiresAt: string;
  /** The controller capped it at the maximum lease duration. */
  capped: boolean;
}

export async function extendLease(
  client: KubeClient,
  namespace: string,
  name: string,
  by: ExtendBy,
): Promise<Extended> {
  const requestPath = simlockPath('leaseRequest', { namespace, name });
  const leasePath = simlockPath('lease', { namespace, name });
  const notGranted = (what: string) =>
    new SimlockError(
      'LEASE_NOT_ACTIVE',
      `lease ${name} is not granted (${what}): nothing to extend`,
    );
  let lease;
  try {
    const request = (await getObject(client, requestPath, LeaseRequestObject, 'leaserequest'))
      .object;
    if (request.status?.phase !== 'Granted') throw notGranted(request.status?.phase ?? 'Pending');
    lease = (await getObject(client, leasePath, LeaseObject, 'lease')).object;
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError('NOT_FOUND', `lease "${name}" not found in namespace "${namespace}"`);
    throw error;
  }
  const expiresAt = Date.parse(lease.spec.expiresAt);
  const counted = lease.spec.durationSeconds;
  if (counted === undefined) throw notGranted('dispatched by a controller that cannot extend');
  const startedAt = expiresAt - counted * 1000;
  const target = 'bySeconds' in by ? expiresAt + by.bySeconds * 1000 : by.until.getTime();
  if (!Number.isFinite(target) || target <= expiresAt)
    throw new SimlockError(
      'USAGE',
      `until: the lease already lasts until ${lease.spec.expiresAt}; a lease is extended, never shortened`,
      { field: 'until' },
    );
  const durationSeconds = Math.ceil((target - startedAt) / 1000);
  // Refused by the API server past the maximum, naming spec.durationSeconds.
  await client.patch(requestPath, { spec: { durationSeconds } });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const current = (await getObject(client, leasePath, LeaseObject, 'lease')).object;
    const now = Date.parse(current.spec.expiresAt);
    if (now > expiresAt) return { expiresAt: current.spec.expiresAt, capped: now < target };
    if (Date.now() > deadline)
      throw new SimlockError(
        'TIMEOUT',
        `the controller did not move lease ${name}'s expiry within ${WAIT_MS / 1000}s (is it running?)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
