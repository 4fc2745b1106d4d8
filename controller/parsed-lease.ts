// A Lease as the controller reads it: the object parsed with its schema, its status parsed on its
// own (one that does not parse is no answer yet), and the facts the request machine needs.
import { LeaseObject, LeaseStatus, isWithdrawn } from '../api/index.js';
import { z } from 'zod';
import type { LeaseFacts } from './request-machine.js';

/** A Lease as the controller reads it: the object parsed, its status parsed on its own. */
export interface ParsedLease extends LeaseFacts {
  /** The Lease's own key (its worker's namespace / its request's UID: ADR 0034). */
  key: string;
  /** Its request's key (namespace/name) and UID, from spec.request; none on a Lease not ours. */
  requestKey: string | undefined;
  requestUid: string | undefined;
  namespace: string;
  name: string;
  finalizers: string[];
  deleting: boolean;
  resourceVersion: string | undefined;
  /** The device its agent granted, if the status says so. */
  deviceId: string | undefined;
  physical: boolean;
}

// What each object parsed to. One Lease event reaches several handlers (the Leases by request, the
// gone-worker check, the request's machine) and a request's Leases are looked up again on each of
// its walks: each parsed the same object anew (a tenth of the controller's samples in a profile of
// a burst; no gain the grants benchmark could tell apart: docs/PERFORMANCE.md §8.1). The informer's
// objects are never changed in place (a new version is a new object), so an object parses once;
// an entry goes with its object.
const parsedObjects = new WeakMap<object, Readonly<ParsedLease> | undefined>();

/**
 * Parses a Lease; undefined when its spec or metadata do not parse. A status that does not parse
 * reads as no answer yet (an agent of another version), never as a crash. The same object gives
 * the same answer, parsed once (frozen: it is shared by every caller).
 */
export function parseLease(object: unknown): Readonly<ParsedLease> | undefined {
  if (object === null || typeof object !== 'object') return undefined;
  if (parsedObjects.has(object)) return parsedObjects.get(object);
  const lease = parseLeaseOnce(object);
  parsedObjects.set(object, lease === undefined ? undefined : Object.freeze(lease));
  return lease;
}

function parseLeaseOnce(object: object): ParsedLease | undefined {
  const parsed = LeaseWithoutStatus.safeParse(object);
  if (!parsed.success) return undefined;
  const { metadata, spec, status: rawStatus } = parsed.data;
  const status = rawStatus === undefined ? undefined : LeaseStatus.safeParse(rawStatus);
  const expiresAt = Date.parse(spec.expiresAt);
  const namespace = metadata.namespace ?? '';
  const activity = status?.success ? status.data.activity : undefined;
  const lastExecAt = activity ? Date.parse(activity.lastExecAt) : NaN;
  const runningUntil = activity?.runningUntil ? Date.parse(activity.runningUntil) : NaN;
  const deleting = metadata.deletionTimestamp !== undefined;
  return {
    key: `${namespace}/${metadata.name}`,
    requestKey: spec.request ? `${spec.request.namespace}/${spec.request.name}` : undefined,
    requestUid: spec.request?.uid,
    namespace,
    name: metadata.name,
    uid: metadata.uid,
    worker: spec.worker,
    status: status?.success ? status.data : undefined,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : undefined,
    durationSeconds: spec.durationSeconds,
    activity: Number.isFinite(lastExecAt)
      ? { lastExecAt, runningUntil: Number.isFinite(runningUntil) ? runningUntil : undefined }
      : undefined,
    lettingGo: deleting || isWithdrawn(metadata),
    finalizers: metadata.finalizers ?? [],
    deleting,
    resourceVersion: metadata.resourceVersion,
    deviceId: status?.success ? status.data.device?.id : undefined,
    physical: status?.success ? status.data.device?.physical === true : false,
  };
}

/** The Lease schema with its status left to be parsed apart (one that does not parse is no answer). */
const LeaseWithoutStatus = LeaseObject.extend({ status: z.unknown().optional() });
