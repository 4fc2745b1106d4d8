// What the controller remembers about one waiting request and each worker, in memory (docs/API.md,
// "Waiting reasons"). Memos belong to a request, so they are not routing stages: routing stays
// pure, and the walk removes memo'd workers before it asks routing to pick.
//
// A refusal or an unanswered dispatch is held against the *revision* of the view the dispatch was
// routed on (views.ts, ViewRevisions), not against a view key: a revision moves on every change of
// the worker's view and never comes back, so a view that goes A → B → A ends the memo at B. And it
// is the routed view, not the one current when the answer arrived: the answer contradicts only the
// view it was asked on. A view the agent wrote after the dispatch (possibly showing a slot freed)
// is newer than anything the refusal knew, so the memo must not hold against it; pinning the memo
// to it could keep a request waiting while the worker's newest view has room.
//
// A refusal because every device of the request on the host is taken (NO_CAPACITY without a
// capacity reason, routed on a view listing those devices, none ready) is held, beyond that, for
// as long as the view lists the same devices that fit, none of them ready: the revision moves on
// every change of any device, and a host with one iPad among busy iPhones was asked again for the
// iPad at each iPhone grant (in the soak, a third of all dispatches were such refusals).
//
// A silence (a dispatch left unanswered) is held, besides, no longer than the worker had to answer:
// a worker that was connected all along may only have missed the Lease, and nothing it writes needs
// to change when it sees Leases again.
//
// A cannot-serve code is remembered for the request's life, whatever the view.
import {
  fitsDevice,
  parseRefusal,
  type CannotServeCode,
  type CapacityReason,
  type DeviceSpec,
} from '../api/index.js';
import type { WorkerView } from '../api/index.js';

export interface RequestMemos {
  /** Workers that answered a cannot-serve code: left out for the request's life. */
  cannotServe: Map<string, CannotServeCode>;
  /**
   * Workers that refused NO_CAPACITY: left out while their view is at the routed revision, or,
   * for a refusal of devices all taken, while the view lists them taken (`takenDevices`).
   */
  refusals: Map<
    string,
    {
      viewRevision: number;
      capacityReason?: CapacityReason | undefined;
      takenDevices?: string | undefined;
    }
  >;
  /**
   * Workers that did not answer within the dispatch timeout: disconnected while at that revision,
   * until `until`. A worker whose heartbeat never lapsed may only have been slow to see the Lease
   * (its watch was down, and an idle agent writes no new status when it is back): it is asked again
   * once its silence has been held as long as it had to answer.
   */
  unanswered: Map<string, { viewRevision: number; until: number }>;
}

export function emptyMemos(): RequestMemos {
  return { cannotServe: new Map(), refusals: new Map(), unanswered: new Map() };
}

/** Nothing is remembered of the request: its routing and reasons follow from its spec alone. */
export function remembersNothing(memos: RequestMemos): boolean {
  return memos.cannotServe.size === 0 && memos.refusals.size === 0 && memos.unanswered.size === 0;
}

/**
 * The listed simulators and emulators of the view that fit the request, when there are some and
 * none is ready: their ids, in order. Undefined otherwise (one is free, or none is listed: the host
 * may boot one, or has not said). Leased to reclaiming keeps the key; ready, or gone from the
 * list (shut down, so bootable), ends it.
 */
export function takenDevicesKey(
  view: WorkerView | undefined,
  spec: DeviceSpec,
): string | undefined {
  if (spec.physical === true) return undefined;
  const fitting = (view?.status?.devices ?? []).filter(
    (device) => !device.physical && fitsDevice(spec, device),
  );
  if (fitting.length === 0 || fitting.some((device) => device.state === 'ready')) return undefined;
  return fitting
    .map((device) => device.id)
    .sort()
    .join(',');
}

/**
 * The refusal memo for the worker of `view`, if it still holds: the view is at the routed
 * revision, or the refusal was of devices all taken and the view lists the very same taken.
 */
export function heldRefusal(
  memos: RequestMemos,
  view: WorkerView,
  spec: DeviceSpec,
  currentRevision: number | undefined,
): { capacityReason?: CapacityReason | undefined } | undefined {
  const refusal = memos.refusals.get(view.name);
  if (refusal === undefined) return undefined;
  if (refusal.viewRevision === currentRevision) return refusal;
  return refusal.takenDevices !== undefined && refusal.takenDevices === takenDevicesKey(view, spec)
    ? refusal
    : undefined;
}

/**
 * Ends the silences held until `now` or before. Answers whether one ended, and when the next one
 * ends, if any is left.
 */
export function endSilences(
  memos: RequestMemos,
  now: number,
): { ended: boolean; nextAt?: number | undefined } {
  let ended = false;
  let nextAt: number | undefined;
  for (const [worker, { until }] of memos.unanswered) {
    if (until <= now) {
      memos.unanswered.delete(worker);
      ended = true;
    } else nextAt = Math.min(nextAt ?? until, until);
  }
  return { ended, nextAt };
}

/** Whether the unanswered memo for a worker still holds at its current view revision. */
export function heldUnanswered(
  memos: RequestMemos,
  worker: string,
  currentRevision: number | undefined,
): boolean {
  const unanswered = memos.unanswered.get(worker);
  return unanswered !== undefined && unanswered.viewRevision === currentRevision;
}

/**
 * An agent's answer worth remembering: a refusal (as the agent wrote it), or a silence, held until
 * `until` at most.
 */
export type Answer = { kind: 'refusal'; refusal: unknown } | { kind: 'unanswered'; until: number };

/**
 * Remembers the answer for the worker: a cannot-serve code for the request's life, a refusal or a
 * silence against `viewRevision` (and a refusal without a capacity reason against `takenDevices`,
 * the routed view's takenDevicesKey, when it had one). Answers the labels it counts under.
 */
export function rememberAnswer(
  request: { memos: RequestMemos; lastCannotServe?: { code: string; message: string } | undefined },
  worker: string,
  answer: Answer,
  viewRevision: number,
  takenDevices?: string,
): { code: string; capacity_reason: string } {
  if (answer.kind === 'unanswered') {
    request.memos.unanswered.set(worker, { viewRevision, until: answer.until });
    return { code: 'UNANSWERED', capacity_reason: '' };
  }
  const refusal = parseRefusal(answer.refusal);
  if (refusal.kind === 'cannot-serve') {
    request.memos.cannotServe.set(worker, refusal.code);
    request.lastCannotServe = {
      code: refusal.code,
      message: refusal.message || `${worker} cannot serve it`,
    };
    return { code: refusal.code, capacity_reason: '' };
  }
  const capacityReason = refusal.kind === 'no-capacity' ? refusal.capacityReason : undefined;
  request.memos.refusals.set(worker, {
    viewRevision,
    capacityReason,
    ...(refusal.kind === 'no-capacity' && capacityReason === undefined && takenDevices
      ? { takenDevices }
      : {}),
  });
  return {
    code: refusal.kind === 'no-capacity' ? 'NO_CAPACITY' : refusal.code,
    capacity_reason: capacityReason ?? '',
  };
}
