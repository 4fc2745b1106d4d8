// Letting a lease go: delete the LeaseRequest and wait until it is gone. The controller's
// finalizer deletes the Lease, the agent reclaims the device and drops the Lease's finalizer, then
// the controller lets the request go: gone means released. Force release (ADR 0008) is an
// annotation naming who does it, which the chart's admission policy allows only to operators.
import { FORCE_RELEASE_ANNOTATION, LeaseRequestObject, SimlockError } from '../api/index.js';
import { isNotFound, simlockPath, type KubeClient } from '../runtime/index.js';
import { getObject } from './kube.js';

export interface ReleaseOptions {
  /** Wait until the device is reclaimed and the request gone (default true). */
  wait?: boolean | undefined;
  /** How long to wait for that (default 60 s). */
  timeoutSeconds?: number | undefined;
}

export interface Released {
  /** It was granted (a lease released), not still waiting (a request withdrawn). */
  granted: boolean;
}

function notFound(namespace: string, name: string): SimlockError {
  return new SimlockError('NOT_FOUND', `lease "${name}" not found in namespace "${namespace}"`, {
    namespace,
    name,
  });
}

export async function releaseLease(
  client: KubeClient,
  namespace: string,
  name: string,
  options: ReleaseOptions = {},
): Promise<Released> {
  const path = simlockPath('leaseRequest', { namespace, name });
  let granted: boolean;
  let worker: string | undefined;
  try {
    const current = await getObject(client, path, LeaseRequestObject, 'leaserequest');
    granted = current.object.status?.phase === 'Granted';
    worker = current.object.status?.worker;
    await client.delete(path);
  } catch (error) {
    if (isNotFound(error)) throw notFound(namespace, name);
    throw error;
  }
  if (options.wait !== false) {
    const timeoutSeconds = options.timeoutSeconds ?? 60;
    await untilGone(client, path, Date.now() + timeoutSeconds * 1000, {
      lease: name,
      timeout: timeoutSeconds,
      worker,
    });
  }
  return { granted };
}

async function untilGone(
  client: KubeClient,
  path: string,
  deadline: number,
  flags: { lease: string; timeout: number; worker: string | undefined },
): Promise<void> {
  let intervalMs = 100;
  for (;;) {
    try {
      await client.get(path);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (Date.now() >= deadline) {
      // Say whose reclaim it waits for, and what to do about a worker that will not come back.
      const waitingFor = flags.worker
        ? `the agent of worker ${flags.worker} has reclaimed the device (a worker that is down does so when it is back; \`kubectl delete worker ${flags.worker}\` lets the leases of a worker gone for good go)`
        : 'the agent has reclaimed the device';
      throw new SimlockError(
        'TIMEOUT',
        `lease ${flags.lease} is still being released after ${flags.timeout}s: the controller lets it go once ${waitingFor}`,
        flags.worker ? { worker: flags.worker } : undefined,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    intervalMs = Math.min(intervalMs * 2, 1000);
  }
}

/**
 * Sets the force-release annotation under the caller's own name (from a SelfSubjectReview); the
 * controller releases the lease at once (ForceReleased) and its Event names them. Waits until it
 * is Released.
 */
export async function forceReleaseLease(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<void> {
  const path = simlockPath('leaseRequest', { namespace, name });
  const review = (await client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  })) as { status?: { userInfo?: { username?: string } } };
  const username = review.status?.userInfo?.username;
  if (!username) throw new SimlockError('INTERNAL', 'the API server did not say who you are');
  try {
    await client.patch(path, {
      metadata: { annotations: { [FORCE_RELEASE_ANNOTATION]: username } },
    });
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError('NOT_FOUND', `lease "${name}" not found in namespace "${namespace}"`);
    throw error;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const current = await getObject(client, path, LeaseRequestObject, 'leaserequest').catch(
      (error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      },
    );
    const phase = current?.object.status?.phase;
    if (current === undefined || phase === 'Released' || phase === 'Failed') return;
    if (Date.now() > deadline)
      throw new SimlockError(
        'TIMEOUT',
        `lease ${name} was not released within 30s (is the controller running?)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
