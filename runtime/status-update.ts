// Status writes as a conditional update (a PUT of the status subresource carrying the
// resourceVersion the writer last saw) instead of a merge patch. On the hot writes of a grant the
// API server then decodes one small body instead of encoding the stored object to JSON, patching
// it and decoding it again (the merge patch was 13 % of its CPU in the grants benchmark,
// docs/PERFORMANCE.md §A.1). A status PUT changes only the status: the API server copies the rest
// of the stored object over whatever the body says, so the body carries the status alone. A
// resourceVersion that is no longer current is answered 409 Conflict: the writer reads again.
import { API_VERSION, RESOURCES } from '../api/index.js';
import { isConflict, type KubeClient } from './kube-client.js';
import { simlockPath } from './paths.js';

type SimlockResource = keyof typeof RESOURCES;

/** What a status PUT names of its object. */
export interface StatusTarget {
  resource: SimlockResource;
  namespace?: string | undefined;
  name: string;
  resourceVersion: string;
}

/** The body of a status PUT: the object's identity, the version it was read at, its whole status. */
export function statusReplacement(
  target: StatusTarget,
  status: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    name: target.name,
    resourceVersion: target.resourceVersion,
  };
  if (target.namespace !== undefined) metadata.namespace = target.namespace;
  return { apiVersion: API_VERSION, kind: RESOURCES[target.resource].kind, metadata, status };
}

/**
 * `patch` applied to `status` at the top level as a merge patch would apply it (RFC 7386): a null
 * removes the field, any other value replaces it whole. The status a PUT sends is this of the
 * status last seen, so it says what the merge patch would have made of it.
 */
export function patchedStatus(
  status: Readonly<Record<string, unknown>> | undefined,
  patch: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...status };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = value;
  }
  return result;
}

/** The resourceVersion of an object the API server answered with, if it has one. */
export function resourceVersionOf(object: unknown): string | undefined {
  if (object === null || typeof object !== 'object') return undefined;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (metadata === null || typeof metadata !== 'object') return undefined;
  const version = (metadata as { resourceVersion?: unknown }).resourceVersion;
  return typeof version === 'string' ? version : undefined;
}

/** The status of an object the API server answered with, as a record (undefined if it has none). */
export function statusOf(object: unknown): Record<string, unknown> | undefined {
  if (object === null || typeof object !== 'object') return undefined;
  const status = (object as { status?: unknown }).status;
  return status !== null && typeof status === 'object' && !Array.isArray(status)
    ? (status as Record<string, unknown>)
    : undefined;
}

/** One conditional status write, and what to do when it meets a newer version. */
export interface StatusWrite {
  client: KubeClient;
  target: Omit<StatusTarget, 'resourceVersion'>;
  /** The version to write onto (as last written or seen); undefined: read the object first. */
  version: string | undefined;
  status: Record<string, unknown>;
  /** Reads after a conflict before the conflict is thrown (the caller's backoff takes over). */
  rereads: number;
  /** After a read: whether the status found is already the one to write (then nothing is). */
  upToDate?: (found: Record<string, unknown> | undefined) => boolean;
}

export interface StatusWritten {
  /** The object's version after the write, or as read if nothing needed writing. */
  version: string | undefined;
  /** False if a read found the status already written. */
  written: boolean;
  /** The status a read found (after a conflict), if there was one. */
  found?: Record<string, unknown> | undefined;
}

/**
 * PUTs `status` onto `version`. A 409 means the object changed since: it is read again and, unless
 * the status found is up to date, written onto that version; after `rereads` reads the conflict is
 * thrown. A 404 and any other error are thrown as they come.
 */
export async function writeStatusOnto(write: StatusWrite): Promise<StatusWritten> {
  const { client, target } = write;
  const path = (subresource?: 'status') =>
    simlockPath(target.resource, { namespace: target.namespace, name: target.name, subresource });
  let version = write.version;
  let found: Record<string, unknown> | undefined;
  for (let rereads = 0; ; rereads++) {
    if (version !== undefined) {
      try {
        const answer = await client.replace(
          path('status'),
          statusReplacement({ ...target, resourceVersion: version }, write.status),
        );
        return { version: resourceVersionOf(answer), written: true, found };
      } catch (error) {
        if (!isConflict(error) || rereads >= write.rereads) throw error;
      }
    }
    const current = await client.get(path());
    version = resourceVersionOf(current);
    found = statusOf(current);
    if (write.upToDate?.(found)) return { version, written: false, found };
  }
}
