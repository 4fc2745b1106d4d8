// Which watches the console opens, from what its identity may list and watch as the API server's
// authorizer answers (SelfSubjectAccessReviews; run locally that identity is the person's own
// kubeconfig). A watch it may not make is not opened (it would fail and retry for ever, and the
// console used to wait 30 s on it before it served); the page is told, in one sentence each, what
// is not shown and why. Without --namespace, requests are watched in every namespace when that is
// allowed, else in the namespace of the kubeconfig's context, as kubectl does. Leases are not
// watched: the leases shown are their requests' grants (ADR 0034), so no Lease rule is needed.
import { GROUP, RESOURCES } from '../../api/index.js';
import type { ResourceAttributes } from '../../runtime/index.js';
import type { Ask } from './access.js';

export interface WatchPlan {
  workers: boolean;
  /** The agents' heartbeat Leases in the simlock namespace (only with workers). */
  heartbeats: boolean;
  /** Where requests (and so leases) and Events are watched; undefined: every namespace. */
  namespace: string | undefined;
  requests: boolean;
  events: boolean;
  /** What is not shown, and why: sentences for the page. */
  hidden: string[];
}

export interface PlanInput {
  /** The console's identity may do this; a review that fails counts as yes (the watch will say). */
  may: Ask;
  /** Only this namespace (--namespace, the plugin's -n). */
  namespace?: string | undefined;
  /** The kubeconfig context's namespace: where to look when every namespace is not allowed. */
  fallbackNamespace: string;
  simlockNamespace: string;
  /** Who is refused, as a sentence starts: "You", or "The console's identity". */
  subject: string;
}

interface Resource {
  group: string;
  resource: string;
}

const simlock = (resource: string): Resource => ({ group: GROUP, resource });
const WORKERS = simlock(RESOURCES.worker.plural);
const REQUESTS = simlock(RESOURCES.leaseRequest.plural);
const EVENTS: Resource = { group: '', resource: 'events' };
const HEARTBEATS: Resource = { group: 'coordination.k8s.io', resource: 'leases' };

/** `leases.simlock.dev`, `events`: as the API server names a resource in its refusals. */
function resourceName({ group, resource }: Resource): string {
  return group === '' ? resource : `${resource}.${group}`;
}

export async function planWatches(input: PlanInput): Promise<WatchPlan> {
  /** The verb refused to list and watch `what` in `namespace` (none: everywhere), if any. */
  const refused = async (what: Resource, namespace?: string): Promise<string | undefined> => {
    const ask = (verb: string) => {
      const attributes: ResourceAttributes = {
        verb,
        ...what,
        ...(namespace !== undefined ? { namespace } : {}),
      };
      return input.may(attributes).catch(() => true);
    };
    const [list, watch] = await Promise.all([ask('list'), ask('watch')]);
    return !list ? 'list' : !watch ? 'watch' : undefined;
  };
  /** Why `what` is not watched, as a sentence ending in `consequence`; undefined: it is. */
  const check = async (
    what: Resource,
    namespace: string | undefined,
    consequence: string,
  ): Promise<string | undefined> => {
    const verb = await refused(what, namespace);
    if (verb === undefined) return undefined;
    const where =
      what === WORKERS ? '' : namespace ? ` in namespace ${namespace}` : ' in all namespaces';
    return `${input.subject} may not ${verb} ${resourceName(what)}${where}: ${consequence}.`;
  };

  const [noWorkers, everywhere] = await Promise.all([
    check(WORKERS, undefined, 'the fleet is not shown'),
    input.namespace === undefined ? refused(REQUESTS) : Promise.resolve(undefined),
  ]);
  let namespace = input.namespace;
  const scope: string[] = [];
  if (namespace !== undefined) scope.push(`Only namespace ${namespace} is shown, as asked.`);
  else if (everywhere !== undefined) {
    namespace = input.fallbackNamespace;
    scope.push(
      `${input.subject} may not ${everywhere} ${resourceName(REQUESTS)} in all namespaces: only namespace ${namespace} is shown.`,
    );
  }
  const [noRequests, noEvents, noHeartbeats] = await Promise.all([
    check(REQUESTS, namespace, 'requests and leases are not shown'),
    check(EVENTS, namespace, "requests' Events are not shown"),
    noWorkers === undefined
      ? check(HEARTBEATS, input.simlockNamespace, "workers' heartbeats are not shown")
      : Promise.resolve(undefined),
  ]);
  const hidden = [noWorkers, ...scope, noRequests, noEvents, noHeartbeats].filter(
    (sentence): sentence is string => sentence !== undefined,
  );
  return {
    workers: noWorkers === undefined,
    heartbeats: noWorkers === undefined && noHeartbeats === undefined,
    namespace,
    requests: noRequests === undefined,
    events: noEvents === undefined,
    hidden,
  };
}
