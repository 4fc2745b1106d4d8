// Extending a lease: grow the request's spec.durationSeconds (the one field of its spec that may
// change, and only upwards; CEL), then wait until the controller has moved the expiry it shows on
// the request (status.expiresAt), which it writes once it has moved the Lease's, which the agent
// honours (ADR 0008). Only the request is read: the Lease may live in its worker's namespace,
// where the holder may not read (ADR 0034).
import { SimlockError } from '../api/index.js';
import { simlockPath, type KubeClient } from '../runtime/index.js';
import { readRequest } from './kube.js';

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
  const notGranted = (what: string) =>
    new SimlockError(
      'LEASE_NOT_ACTIVE',
      `lease ${name} is not granted (${what}): nothing to extend`,
    );
  const read = () => readRequest(client, namespace, name);
  const request = await read();
  const status = request.status;
  if (status?.phase !== 'Granted') throw notGranted(status?.phase ?? 'Pending');
  const current = status.expiresAt;
  if (current === undefined) throw notGranted('its expiry is not written yet');
  const expiresAt = Date.parse(current);
  // The length the expiry counts from the dispatch, as granted; a controller that does not write
  // it yet granted the spec's (which it capped only past its maximum: an extension then is too).
  const counted = status.durationSeconds ?? request.spec.durationSeconds;
  const startedAt = expiresAt - counted * 1000;
  const target = 'bySeconds' in by ? expiresAt + by.bySeconds * 1000 : by.until.getTime();
  if (!Number.isFinite(target) || target <= expiresAt)
    throw new SimlockError(
      'USAGE',
      `until: the lease already lasts until ${current}; a lease is extended, never shortened`,
      { field: 'until' },
    );
  const durationSeconds = Math.ceil((target - startedAt) / 1000);
  // Refused by the API server past the maximum, naming spec.durationSeconds.
  await client.patch(requestPath, { spec: { durationSeconds } });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const now = (await read()).status;
    if (now?.phase !== 'Granted') throw notGranted(now?.phase ?? 'Pending');
    const moved = now.expiresAt === undefined ? NaN : Date.parse(now.expiresAt);
    if (moved > expiresAt && now.expiresAt !== undefined)
      return { expiresAt: now.expiresAt, capped: moved < target };
    if (Date.now() > deadline)
      throw new SimlockError(
        'TIMEOUT',
        `the controller did not move lease ${name}'s expiry within ${WAIT_MS / 1000}s (is it running?)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
