// What only a Lease says, for the IDLE column of `list --leases`: the exec proxy's record of exec
// activity (status.activity) and the agent's grant time. Everything else a holder sees is on the
// request (ADR 0034); these two are not, so they are read from the Leases the requests name, where
// the caller may read them, one listing per namespace those Leases are in. A namespace that cannot
// be read leaves its leases' idle time unknown, never guessed.
import { LeaseObject, type LeaseActivity, type LeaseRequestObject } from '../api/index.js';
import { leaseOfRequest, simlockPath, type KubeClient } from '../runtime/index.js';
import { listObjects } from './kube.js';

/** What a Lease alone says of its use. */
export interface LeaseUse {
  activity?: LeaseActivity | undefined;
  grantedAt?: string | undefined;
}

function requestKey(request: LeaseRequestObject): string {
  return `${request.metadata.namespace ?? ''}/${request.metadata.name}`;
}

/**
 * The use of each request's Lease, by the request's namespace/name; a request whose Lease could not
 * be read (not allowed, gone) has none.
 */
export async function leaseUses(
  client: KubeClient,
  requests: readonly LeaseRequestObject[],
): Promise<Map<string, LeaseUse>> {
  const wanted = new Map<string, Map<string, string>>();
  for (const request of requests) {
    const lease = leaseOfRequest(request);
    const names = wanted.get(lease.namespace) ?? new Map<string, string>();
    names.set(lease.name, requestKey(request));
    wanted.set(lease.namespace, names);
  }
  const uses = new Map<string, LeaseUse>();
  await Promise.all(
    [...wanted].map(async ([namespace, names]) => {
      const leases = await listObjects(
        client,
        simlockPath('lease', { namespace }),
        LeaseObject,
        'lease',
        () => undefined,
      ).catch(() => []);
      for (const { object } of leases) {
        const key = names.get(object.metadata.name);
        if (key === undefined) continue;
        uses.set(key, { activity: object.status?.activity, grantedAt: object.status?.grantedAt });
      }
    }),
  );
  return uses;
}
