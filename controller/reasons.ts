// One reason per known worker for a request that waits (DESIGN.md §3.2). The first failing check
// wins, in this order:
//   1. a filter reason from explain (over every view, memo'd ones included: drained comes before a
//      remembered refusal);
//   2. a cannot-serve memo: the code's reason;
//   3. a refusal memo still held (the worker's view has not changed since the dispatch it refused:
//      memos.ts): full, with the refusal's capacity reason, else the rank zero reason's, else plain
//      full; a dispatch left unanswered, likewise held: disconnected. Once the view has moved, the
//      memo says nothing and the worker's line is what the stages say of its current view;
//   4. claimed by an earlier request in this walk: not-chosen;
//   5. a rank zero reason from explain (full + ram-budget, no-free-physical);
//   6. not-chosen: it passed every check and another worker was picked.
import type { CannotServeCode, DeviceSpec, WaitingReason, WorkerReason } from '../api/index.js';
import { heldRefusal, heldUnanswered, type RequestMemos } from './memos.js';
import type { Explanation, WorkerView } from '../api/index.js';

const CANNOT_SERVE_REASONS: Record<CannotServeCode, WaitingReason> = {
  UNKNOWN_MODEL: 'unknown-model',
  RUNTIME_MISSING: 'runtime-missing',
  NO_DRIVER: 'no-driver',
  CAPABILITY_MISSING: 'capability-missing',
};

export interface ReasonInputs {
  /** The request's device spec (a refusal of devices all taken holds while they stay taken). */
  spec: DeviceSpec;
  /** Every known worker's view, in name order. */
  views: readonly WorkerView[];
  /** Each worker's current view revision. */
  viewRevisions: ReadonlyMap<string, number>;
  /** explain() over the same views, in the same order. */
  explanations: readonly Explanation[];
  memos: RequestMemos;
  claimedEarlier: (worker: string) => boolean;
}

export function reasonsFor({
  spec,
  views,
  viewRevisions,
  explanations,
  memos,
  claimedEarlier,
}: ReasonInputs): WorkerReason[] {
  // explain() answers in the views' order, so the explanation of a view is at its index; a map
  // is built only if that ever fails to hold (this runs for a thousand workers, many times a walk).
  let byWorker: Map<string, Explanation> | undefined;
  const explanationOf = (name: string, index: number): Explanation | undefined => {
    const atIndex = explanations[index];
    if (atIndex?.worker === name) return atIndex;
    byWorker ??= new Map(explanations.map((explanation) => [explanation.worker, explanation]));
    return byWorker.get(name);
  };
  return views.map((view, index) => {
    const name = view.name;
    const explanation = explanationOf(name, index);
    if (explanation?.kind === 'dropped')
      return entry(name, explanation.reason.reason, explanation.reason.capacityReason);

    const cannotServe = memos.cannotServe.get(name);
    if (cannotServe !== undefined) return entry(name, CANNOT_SERVE_REASONS[cannotServe]);

    const revision = viewRevisions.get(name);
    const refusal = heldRefusal(memos, view, spec, revision);
    if (refusal !== undefined) {
      const seen =
        explanation?.kind === 'ranked-zero' && explanation.reason.reason === 'full'
          ? explanation.reason.capacityReason
          : undefined;
      return entry(name, 'full', refusal.capacityReason ?? seen);
    }
    if (heldUnanswered(memos, name, revision)) return entry(name, 'disconnected');

    if (claimedEarlier(name)) return entry(name, 'not-chosen');
    if (explanation?.kind === 'ranked-zero')
      return entry(name, explanation.reason.reason, explanation.reason.capacityReason);
    return entry(name, 'not-chosen');
  });
}

function entry(
  worker: string,
  reason: WaitingReason,
  capacityReason?: WorkerReason['capacityReason'],
): WorkerReason {
  return capacityReason !== undefined && reason === 'full'
    ? { worker, reason, capacityReason }
    : { worker, reason };
}
