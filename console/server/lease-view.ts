// The lease a request holds, as the console's Leases page shows it: read off the request (its
// status.worker, device, expiresAt, recovery; spec.holder), never off the Lease, which lives in its
// worker's namespace where people need no rule (ADR 0034).
import type { LeaseRequestObject } from '../../api/index.js';
import { recoveringText } from '../../runtime/index.js';
import type { LeaseView } from '../model/wire.js';

/**
 * The lease a granted request holds, as the Leases page shows it: who holds which device where, since
 * when (the request's Granted condition) and until when; none for a request that holds none.
 */
export function leaseViewOf(request: LeaseRequestObject): LeaseView | undefined {
  const { metadata, spec, status } = request;
  if (status?.phase !== 'Granted' || status.worker === undefined) return undefined;
  if (status.expiresAt === undefined) return undefined;
  const granted = status.conditions?.find(
    (condition) => condition.type === 'Granted' && condition.status === 'True',
  );
  const recovery = status.recovery;
  return {
    namespace: metadata.namespace ?? '',
    name: metadata.name,
    worker: status.worker,
    ...optional('holder', spec.holder),
    expiresAt: status.expiresAt,
    phase: 'Granted',
    ...optional('device', status.device),
    ...optional('grantedAt', granted?.lastTransitionTime),
    deleting: metadata.deletionTimestamp !== undefined,
    ...optional('recovery', recovery),
    ...optional('recoveryText', recovery && recoveringText(recovery, status.device)),
  };
}

/** `{[name]: value}` when there is a value, else nothing: optional fields stay absent. */
function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [name]: value } as { [P in K]?: V });
}
