// REST paths of the objects simlock reads and writes.
import { GROUP, VERSION, RESOURCES } from '../api/index.js';

type SimlockResource = keyof typeof RESOURCES;

/** Path of a simlock resource: its collection, or one object (and a subresource). */
export function simlockPath(
  resource: SimlockResource,
  options: { namespace?: string | undefined; name?: string; subresource?: 'status' } = {},
): string {
  const { plural } = RESOURCES[resource];
  let path = `/apis/${GROUP}/${VERSION}`;
  if (options.namespace !== undefined)
    path += `/namespaces/${encodeURIComponent(options.namespace)}`;
  path += `/${plural}`;
  if (options.name !== undefined) path += `/${encodeURIComponent(options.name)}`;
  if (options.subresource) path += `/${options.subresource}`;
  return path;
}

/** Path of a coordination.k8s.io Lease (heartbeats and leader election). */
export function coordinationLeasePath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

/** A new coordination.k8s.io Lease (a heartbeat, a leader's lock, a holder session) to create. */
export function coordinationLease(
  metadata: { name: string; namespace?: string; labels?: Record<string, string> },
  spec: Record<string, unknown>,
) {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec };
}

export function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}
