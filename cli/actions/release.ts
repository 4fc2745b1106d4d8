// `kubectl simlock release <lease>`: delete the LeaseRequest and wait until it is gone. The
// controller's finalizer deletes the Lease, the agent reclaims the device and drops the Lease's
// finalizer, then the controller lets the request go: gone means released.
import { z } from 'zod';
import { FORCE_RELEASE_ANNOTATION, LeaseRequestObject, SimlockError } from '../../api/index.js';
import { isNotFound, simlockPath, type KubeClient } from '../../runtime/index.js';
import { durationFlag, objectName, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import { resourceName } from '../format/output.js';
import type { CliIO } from '../io.js';
import { getObject } from '../kube.js';
import { connect } from '../options.js';

const ReleaseFlags = z.object({
  lease: objectName,
  noWait: z.boolean().default(false),
  force: z.boolean().default(false),
  timeout: durationFlag(1, 3600).default(60),
});

export async function release(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['name', 'wide'], 'release');
  const flags = parseFlags(ReleaseFlags, argv, {
    lease: '<lease>',
    noWait: '--no-wait',
    timeout: '--timeout',
    force: '--force',
  });
  const { client, namespace } = connect(globals);
  const path = simlockPath('leaseRequest', { namespace, name: flags.lease });
  const notFound = () =>
    new SimlockError('NOT_FOUND', `lease "${flags.lease}" not found in namespace "${namespace}"`, {
      namespace,
      name: flags.lease,
    });

  if (flags.force) {
    await forceRelease(client, path, flags.lease, namespace);
    io.out(`Lease ${flags.lease} force-released`);
    return 0;
  }
  let granted: boolean;
  let worker: string | undefined;
  try {
    const current = await getObject(client, path, LeaseRequestObject, 'leaserequest');
    granted = current.object.status?.phase === 'Granted';
    worker = current.object.status?.worker;
    await client.delete(path);
  } catch (error) {
    if (isNotFound(error)) throw notFound();
    throw error;
  }
  if (!flags.noWait)
    await untilGone(client, path, Date.now() + flags.timeout * 1000, { ...flags, worker });

  if (globals.output === 'name') io.out(`${resourceName('leaseRequest', flags.lease)} deleted`);
  else io.out(granted ? `Lease ${flags.lease} released` : `Request ${flags.lease} withdrawn`);
  return 0;
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
 * --force: the annotation naming who releases it, which the chart's admission policy allows only
 * to who may `force-release` leaserequests, under their own name; the controller releases the
 * lease at once (ForceReleased) and its Event names them. Waits until it is Released.
 */
async function forceRelease(
  client: KubeClient,
  path: string,
  lease: string,
  namespace: string,
): Promise<void> {
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
      throw new SimlockError('NOT_FOUND', `lease "${lease}" not found in namespace "${namespace}"`);
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
        `lease ${lease} was not released within 30s (is the controller running?)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
