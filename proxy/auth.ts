// Who is calling, and may they exec on this lease: TokenReview, then SubjectAccessReview, asked of
// the API server with the proxy's own credentials (it needs create on both; see the chart's RBAC).
// The reviews themselves are shared machinery (runtime/access-review.ts).
import { GROUP, RESOURCES } from '../api/index.js';
import { subjectMay, type Caller, type KubeClient } from '../runtime/index.js';

export { bearerToken, reviewToken, type Caller } from '../runtime/index.js';

/** May the caller `create leases/exec` on this lease in this namespace? */
export function mayExec(
  client: KubeClient,
  caller: Caller,
  namespace: string,
  lease: string,
): Promise<boolean> {
  return subjectMay(client, caller, {
    namespace,
    verb: 'create',
    group: GROUP,
    resource: RESOURCES.lease.plural,
    subresource: 'exec',
    name: lease,
  });
}
