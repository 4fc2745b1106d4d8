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
// A cannot-serve code is remembered for the request's life, whatever the view.
import { parseRefusal, type CannotServeCode, type CapacityReason } from '../api/index.js';

export interface RequestMemos {
  /** Workers that answered a cannot-serve code: left out for the request's life. */
  cannotServe: Map<string, CannotServeCode>;
  /** Workers that refused NO_CAPACITY: left out while their view is at the routed revision. */
  refusals: Map<string, { viewRevision: number; capacityReason?: CapacityReason | undefined }>;
  /** Workers that did not answer within the dispatch timeout: disconnected while at that revision. */
  unanswered: Map<string, { viewRevision: number }>;
}

export function emptyMemos(): RequestMemos {
  return { cannotServe: new Map(), refusals: new Map(), unanswered: new Map() };
}

/** The refusal memo for a worker, if it still holds at the worker's current view revision. */
export function heldRefusal(
  memos: RequestMemos,
  worker: string,
  currentRevision: number | undefined,
): { capacityReason?: CapacityReason | undefined } | undefined {
  const refusal = memos.refusals.get(worker);
  return refusal !== undefined && refusal.viewRevision === currentRevision ? refusal : undefined;
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

/** An agent's answer worth remembering: a refusal (as the agent wrote it), or a silence. */
export type Answer = { kind: 'refusal'; refusal: unknown } | { kind: 'unanswered' };

/**
 * Remembers the answer for the worker: a cannot-serve code for the request's life, a refusal or a
 * silence against `viewRevision`. Answers the labels the refusal counts under.
 */
export function rememberAnswer(
  request: { memos: RequestMemos; lastCannotServe?: { code: string; message: string } | undefined },
  worker: string,
  answer: Answer,
  viewRevision: number,
): { code: string; capacity_reason: string } {
  if (answer.kind === 'unanswered') {
    request.memos.unanswered.set(worker, { viewRevision });
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
  request.memos.refusals.set(worker, { viewRevision, capacityReason });
  return {
    code: refusal.kind === 'no-capacity' ? 'NO_CAPACITY' : refusal.code,
    capacity_reason: capacityReason ?? '',
  };
}
