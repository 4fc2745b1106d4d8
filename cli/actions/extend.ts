// `kubectl simlock extend <lease> --by 30m | --until <time>`: grow the request's
// spec.durationSeconds (the one field of its spec that may change, and only upwards; CEL), then
// wait until the controller has moved the Lease's expiresAt, which its agent honours.
import { z } from 'zod';
import { LeaseObject, LeaseRequestObject, SimlockError } from '../../api/index.js';
import { isNotFound, simlockPath } from '../../runtime/index.js';
import {
  durationFlag,
  objectName,
  parseFlags,
  parseGlobals,
  rejectOutput,
  usageError,
} from '../flags.js';
import type { CliIO } from '../io.js';
import { getObject } from '../kube.js';
import { connect } from '../options.js';

const ExtendFlags = z.object({
  lease: objectName,
  by: durationFlag(1, 604_800).optional(),
  until: z.iso
    .datetime({ offset: true, message: 'must be a time such as 2026-05-01T18:00:00Z' })
    .optional(),
});

const WAIT_MS = 15_000;

export async function extend(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['json', 'yaml', 'name', 'wide'], 'extend');
  const flags = parseFlags(ExtendFlags, argv, { lease: '<lease>', by: '--by', until: '--until' });
  if ((flags.by === undefined) === (flags.until === undefined))
    throw usageError('--by', 'name one of --by or --until');
  const { client, namespace } = connect(globals);
  const requestPath = simlockPath('leaseRequest', { namespace, name: flags.lease });
  const leasePath = simlockPath('lease', { namespace, name: flags.lease });
  const notGranted = (what: string) =>
    new SimlockError(
      'LEASE_NOT_ACTIVE',
      `lease ${flags.lease} is not granted (${what}): nothing to extend`,
    );
  let lease;
  try {
    const request = (await getObject(client, requestPath, LeaseRequestObject, 'leaserequest'))
      .object;
    if (request.status?.phase !== 'Granted') throw notGranted(request.status?.phase ?? 'Pending');
    lease = (await getObject(client, leasePath, LeaseObject, 'lease')).object;
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError(
        'NOT_FOUND',
        `lease "${flags.lease}" not found in namespace "${namespace}"`,
      );
    throw error;
  }
  const expiresAt = Date.parse(lease.spec.expiresAt);
  const counted = lease.spec.durationSeconds;
  if (counted === undefined) throw notGranted('dispatched by a controller that cannot extend');
  const startedAt = expiresAt - counted * 1000;
  const target =
    flags.by !== undefined ? expiresAt + flags.by * 1000 : Date.parse(flags.until ?? '');
  const durationSeconds = Math.ceil((target - startedAt) / 1000);
  if (target <= expiresAt)
    throw usageError(
      '--until',
      `the lease already lasts until ${lease.spec.expiresAt}; a lease is extended, never shortened`,
    );
  // Refused by the API server past the maximum, naming spec.durationSeconds.
  await client.patch(requestPath, { spec: { durationSeconds } });
  const deadline = io.now() + WAIT_MS;
  for (;;) {
    const current = (await getObject(client, leasePath, LeaseObject, 'lease')).object;
    const now = Date.parse(current.spec.expiresAt);
    if (now > expiresAt) {
      const capped = now < target ? ' (capped at the maximum lease duration)' : '';
      io.out(`Lease ${flags.lease} extended to ${current.spec.expiresAt}${capped}`);
      return 0;
    }
    if (io.now() > deadline)
      throw new SimlockError(
        'TIMEOUT',
        `the controller did not move lease ${flags.lease}'s expiry within ${WAIT_MS / 1000}s (is it running?)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
