// One request as the controller holds it in memory: its life (request-machine.ts), which alone says
// its phase, its worker and its grant; the rest of the status it should have (status.ts); its
// memos; and the timers and retries of its key in the request work queue. Built from the object on
// first sight, so a restarted controller starts from the API.
import { reasonsByWorker, type LeaseRequestSpec, type LeaseRequestStatus } from '../api/index.js';
import { emptyMemos, type RequestMemos } from './memos.js';
import type { Lifetime, MachineTimer, RequestEvent, RequestLife } from './request-machine.js';
import type { RequestState } from './status.js';

/**
 * The machine's timers, the status writer's and event recorder's own, and the end of the request's
 * earliest silence memo (memos.ts).
 */
export type RequestTimer = MachineTimer | 'write' | 'dispatchEvent' | 'silence';
/** Writes that failed and are made again after the request's backoff. */
export type RequestRetry =
  | 'admit'
  | 'createLease'
  | 'removeFinalizer'
  | 'write'
  | 'deleteLease'
  | 'deleteStrayLease'
  | 'dispatch'
  | 'extendLease';
/** A write made again; what it answers the machine with, if anything (the shell applies it). */
export type RetriedWrite = () => Promise<RequestEvent | undefined>;

export interface TrackedRequest extends RequestState {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  spec: LeaseRequestSpec;
  createdAt: number;
  /**
   * When this process first saw it, in the order it saw requests: its queuedAt when it is queued
   * (not the moment its admission's write came back, which may be after a later request's).
   */
  seenAt: number;
  life: RequestLife;
  memos: RequestMemos;
  lastCannotServe?: { code: string; message: string } | undefined;
  stage?: string | undefined;
  /**
   * The view of the worker the current dispatch was routed on: its revision and its
   * takenDevicesKey. A refusal or a silence is remembered against it (memos.ts says why that
   * view, not the one the answer arrived at). None for a dispatch adopted from an earlier process.
   */
  routedOn?: { revision: number | undefined; takenDevices: string | undefined } | undefined;
  /** When this process dispatched it (how long a dispatch took to be granted: estimate/history.ts). */
  dispatchedAt?: number | undefined;
  hasFinalizer: boolean;
  /** When each of the request's timers falls due (milliseconds since the epoch): request-timers.ts. */
  timers: Partial<Record<RequestTimer, number>>;
  retries: Map<RequestRetry, RetriedWrite>;
  /**
   * Uids of the request's Leases this process deleted or is deleting: withdrawn, released or swept
   * as strays (request-writes.ts). Our watch may still show one after its delete has answered and
   * the request has gone elsewhere; it is not another Lease of the request to sweep.
   */
  deletedLeases: Set<string>;
  /**
   * The Lease create in flight, until the API server answers it for certain (its retries
   * included): the worker it is for, and when it is answered. A withdrawal or a delete of the
   * request's Lease waits for it (request-writes.ts).
   */
  leaseCreate?: { worker: string; answered: Promise<void> } | undefined;
  /**
   * The current dispatch's Event (where to, and when), held until the agent answers: a grant
   * records both in one Event (ADR 0005, 0016); anything else records it before its own.
   */
  dispatchEvent?: { to: string; at: number } | undefined;
  /** Why it was released, for its Event: the message, and the condition's reason. */
  releasedBecause?: string | undefined;
  releasedReason?: string | undefined;
  /** The operator named by the force-release annotation (admitted by the chart's policy). */
  forceReleasedBy?: string | undefined;
  /** When this process last saw the holder's session renewed (first sight counts as one). */
  holderRenewedAt?: number | undefined;
  /**
   * The request's resourceVersion as this process last wrote or read it: its next status write is
   * made onto it (a PUT; a 409 reads the request again). Until then, the informer's.
   */
  writtenVersion?: string | undefined;
  /** When reasons were last written. */
  lastReasonWriteAt: number;
  /**
   * Until then only an outcome is written at once: a request that waits or is dispatched only
   * for a moment (most of a burst: one dispatch per worker per walk) goes from Pending straight to
   * Granted in one write, instead of three.
   */
  settleUntil: number;
}

export interface SeenRequest {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  spec: LeaseRequestSpec;
  createdAt: number;
  seenAt: number;
  status: LeaseRequestStatus | undefined;
}

export function trackRequest(input: SeenRequest): TrackedRequest {
  const status = input.status;
  return {
    key: input.key,
    namespace: input.namespace,
    name: input.name,
    uid: input.uid,
    spec: input.spec,
    createdAt: input.createdAt,
    seenAt: input.seenAt,
    life: { kind: 'new' },
    queuedAt: status?.queuedAt ? Date.parse(status.queuedAt) : undefined,
    position: status?.position,
    workers: reasonsByWorker(status),
    estimate: status?.estimate && {
      at: status.estimate.grantAt !== undefined ? Date.parse(status.estimate.grantAt) : undefined,
      basis: status.estimate.basis,
    },
    lease:
      status?.lease !== undefined && status.leaseNamespace !== undefined
        ? { namespace: status.leaseNamespace, name: status.lease }
        : undefined,
    device: status?.device,
    progress: status?.progress,
    recovery: status?.recovery,
    error: status?.error,
    conditions: status?.conditions ?? [],
    memos: emptyMemos(),
    hasFinalizer: false,
    timers: {},
    retries: new Map(),
    deletedLeases: new Set(),
    written: status,
    lastReasonWriteAt: 0,
    settleUntil: 0,
  };
}

/** When a request that may wait times out; undefined for one that may not. */
export function waitDeadline(request: TrackedRequest): number | undefined {
  return request.spec.noWait
    ? undefined
    : request.createdAt + request.spec.waitTimeoutSeconds * 1000;
}

/** The controller's limits on a lease's lifetime (its flags). */
export interface LifetimeLimits {
  maxLeaseMs: number;
  expiringSoonMs: number;
}

/** What the request machine needs of a request's lifetime (lease-lifetime.ts). */
export function lifetimeOf(request: TrackedRequest, limits: LifetimeLimits): Lifetime {
  const { spec } = request;
  return {
    durationMs: spec.durationSeconds * 1000,
    maxLeaseMs: limits.maxLeaseMs,
    expiringSoonMs: limits.expiringSoonMs,
    holderRenewMs:
      spec.holderRenewSeconds !== undefined ? spec.holderRenewSeconds * 1000 : undefined,
    holderRenewedAt: request.holderRenewedAt,
    idleTimeoutMs:
      spec.idleTimeoutSeconds !== undefined ? spec.idleTimeoutSeconds * 1000 : undefined,
    forceReleasedBy: request.forceReleasedBy,
  };
}
