// Finding a request's Lease the way a test needs to: a Lease lives in its worker's namespace, named
// by its request's UID (ADR 0034), labelled with its request's namespace and naming the request in
// spec.request. Tests look it up by the request's namespace and name.
import { REQUEST_NAMESPACE_LABEL, WORKER_LABEL, leaseNamespaceOf } from '../../api/index.js';
import { isAlreadyExists, simlockPath, type KubeClient } from '../../runtime/index.js';

interface LeaseLike {
  metadata: { name: string; namespace?: string; creationTimestamp?: string };
  spec?: { request?: { name?: string; uid?: string } };
}

/**
 * The Lease of the request `namespace/name`, as the API server has it now; the newest when an
 * earlier request of that name still has one being reclaimed. None: undefined.
 */
export async function leaseOfRequest<T = LeaseLike>(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  const list = (await client.get(simlockPath('lease'), {
    query: { labelSelector: `${REQUEST_NAMESPACE_LABEL}=${namespace}` },
  })) as { items: LeaseLike[] };
  const ofRequest = list.items
    .filter((lease) => lease.spec?.request?.name === name)
    .sort((a, b) =>
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
    );
  return ofRequest[0] as T | undefined;
}

/** The path of a Lease object (or its status), from the object itself. */
export function pathOfLease(
  lease: { metadata: { name: string; namespace?: string } },
  subresource?: 'status',
): string {
  return simlockPath('lease', {
    namespace: lease.metadata.namespace ?? '',
    name: lease.metadata.name,
    ...(subresource ? { subresource } : {}),
  });
}

/** An informer's options for every Lease of the requests of `namespace`, wherever they live. */
export function leasesOfRequestsIn(namespace: string): { path: string; labelSelector: string } {
  return { path: simlockPath('lease'), labelSelector: `${REQUEST_NAMESPACE_LABEL}=${namespace}` };
}

/** The name of the request a Lease object dispatches (spec.request.name); '' when it names none. */
export function requestNameOf(lease: object): string {
  return (lease as LeaseLike).spec?.request?.name ?? '';
}

/**
 * Makes `worker`'s Lease namespace (as the controller does at its first dispatch) for a test that
 * creates the worker's Leases itself, and answers its name.
 */
export async function makeLeaseNamespace(client: KubeClient, worker: string): Promise<string> {
  const name = leaseNamespaceOf(worker);
  try {
    await client.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { [WORKER_LABEL]: worker } },
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
  return name;
}
