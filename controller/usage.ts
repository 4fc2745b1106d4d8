// What the usage histograms observe, decided from what the controller wrote (pure). A request's
// wait is observed when one of our status writes takes it from not granted to granted on the
// server, and a lease's duration when one takes it to Released: each status write is a PUT onto
// the resourceVersion the writer last read (status-writer.ts), so of all the controller processes
// that ever held the request exactly one makes that transition, and only that one observes it. A
// process that picks up a request already Granted or Released (a restart, a new leader) finds the
// transition made and observes nothing. (A PUT that reached the server but whose answer was lost
// is read back as already written, and not observed: at most once, never twice.) A lease that ends
// by the request's deletion has no status write: it is observed where the shell sees the deletion
// of a request it holds granted (request-shell.ts), which a new leader never does (its first sight
// of a request is `new`).
import type { Condition } from '../api/index.js';
import type { WorkerView } from '../api/index.js';

/** A request's status as written: only what the observations read. */
export interface WrittenStatus {
  phase?: unknown;
  conditions?: readonly Condition[] | undefined;
}

/** What a request says of what it asked for and what it got. */
export interface UsageFacts {
  namespace: string;
  platform: string;
  /** The model it named, in any case; none: any model of its class. */
  model?: string | undefined;
  /** The granted device's model. */
  deviceModel?: string | undefined;
  createdAt: number;
  /** When this process saw the grant (none: an earlier process did). */
  grantedAt?: number | undefined;
}

export interface WaitObservation {
  labels: { platform: string; model: string; namespace: string };
  seconds: number;
}

export interface LeaseObservation {
  labels: { platform: string; model: string; reason: string };
  seconds: number;
}

/** The model label of a request that named none. */
export const ANY_MODEL = 'any';
/** The label of a model or namespace past the bounds. */
export const OTHER = 'other';
/** The end reason of a lease whose request was deleted (its holder's release). */
export const DELETED_REASON = 'RequestDeleted';

/**
 * Why a lease ended, as its Granted condition's reason says: the controller's own reasons
 * (request-machine.ts, lease-lifetime.ts) and the phases an agent writes on its Lease. A bounded
 * set: anything else is `other`.
 */
const END_REASONS = new Set([
  DELETED_REASON,
  'Expired',
  'LeaseDeleted',
  'LeaseGone',
  'HolderGone',
  'Idle',
  'ForceReleased',
  'Lost',
  'Released',
  'Refused',
]);

const GRANTED_PHASES = new Set(['Granted', 'Released']);

/** Granted, now or before it was released (Released follows only a grant: lease-lifetime.ts). */
function granted(status: WrittenStatus | undefined): boolean {
  return status !== undefined && GRANTED_PHASES.has(String(status.phase));
}

function grantedCondition(status: WrittenStatus | undefined): Condition | undefined {
  return status?.conditions?.find((condition) => condition.type === 'Granted');
}

/**
 * Bounds the labels of model and namespace: a request may name any model and come from any
 * namespace, and each distinct value is a series in every bucket of the histogram.
 */
export class UsageLabels {
  private readonly namespaces = new Set<string>();
  private modelsOf: readonly WorkerView[] | undefined;
  private models = new Map<string, string>();

  /**
   * @param views The fleet's views now (the same array until the fleet changes: fleet-cache.ts).
   * @param maxNamespaces Namespaces named in labels: the first this many seen by this process,
   *   then `other`. Teams are namespaces; a fleet has tens of them, not thousands.
   */
  constructor(
    private readonly views: () => readonly WorkerView[],
    private readonly maxNamespaces = 50,
  ) {}

  /**
   * The model as the fleet spells it when a worker's catalog or devices list it (case aside),
   * else `other`; `any` for a request that named none. The fleet's models are bounded by what
   * its hosts can make or hold.
   */
  model(model: string | undefined): string {
    if (model === undefined || model === '') return ANY_MODEL;
    const views = this.views();
    if (views !== this.modelsOf) {
      this.modelsOf = views;
      this.models = fleetModels(views);
    }
    return this.models.get(model.toLowerCase()) ?? OTHER;
  }

  namespace(namespace: string): string {
    if (this.namespaces.has(namespace)) return namespace;
    if (this.namespaces.size >= this.maxNamespaces) return OTHER;
    this.namespaces.add(namespace);
    return namespace;
  }
}

/** Every model a worker's catalog or devices name, by its lower case. */
function fleetModels(views: readonly WorkerView[]): Map<string, string> {
  const models = new Map<string, string>();
  for (const view of views) {
    for (const model of view.status?.catalog?.models ?? [])
      models.set(model.name.toLowerCase(), model.name);
    for (const device of view.status?.devices ?? [])
      models.set(device.model.toLowerCase(), device.model);
  }
  return models;
}

/** The wait from creation to grant, when this write made the request granted on the server. */
export function waitWritten(
  before: WrittenStatus | undefined,
  after: WrittenStatus,
  facts: UsageFacts,
  labels: UsageLabels,
  now: number,
): WaitObservation | undefined {
  if (granted(before) || !granted(after)) return undefined;
  const grantedAt = facts.grantedAt ?? now;
  return {
    labels: {
      platform: facts.platform,
      model: labels.model(facts.model),
      namespace: labels.namespace(facts.namespace),
    },
    seconds: Math.max(0, grantedAt - facts.createdAt) / 1000,
  };
}

/** The lease's duration, when this write made the request Released on the server. */
export function endWritten(
  before: WrittenStatus | undefined,
  after: WrittenStatus,
  facts: UsageFacts,
  labels: UsageLabels,
  now: number,
): LeaseObservation | undefined {
  if (before?.phase === 'Released' || after.phase !== 'Released') return undefined;
  const condition = grantedCondition(after);
  const endedAt = Date.parse(condition?.lastTransitionTime ?? '') || now;
  return leaseEnded(facts, condition?.reason, grantStart(before, facts), endedAt, labels);
}

/**
 * A granted lease ended (`reason`) at `endedAt`; `startedAt`: when it was granted. None when the
 * start is unknown.
 */
export function leaseEnded(
  facts: UsageFacts,
  reason: string | undefined,
  startedAt: number | undefined,
  endedAt: number,
  labels: UsageLabels,
): LeaseObservation | undefined {
  if (startedAt === undefined) return undefined;
  return {
    labels: {
      platform: facts.platform,
      model: labels.model(facts.deviceModel ?? facts.model),
      reason: reason !== undefined && END_REASONS.has(reason) ? reason : OTHER,
    },
    seconds: Math.max(0, endedAt - startedAt) / 1000,
  };
}

/**
 * When the lease was granted: as this process saw it, else as the status an earlier process
 * wrote says (its Granted condition turned True then).
 */
export function grantStart(
  status: WrittenStatus | undefined,
  facts: UsageFacts,
): number | undefined {
  if (facts.grantedAt !== undefined) return facts.grantedAt;
  const condition = grantedCondition(status);
  if (condition?.status !== 'True') return undefined;
  const at = Date.parse(condition.lastTransitionTime);
  return Number.isNaN(at) ? undefined : at;
}
