// The walk: one pass over the waiting requests in queue order. Pure: views, memos and a policy in;
// dispatches, failures and reasons out. The reconciler does the I/O.
import {
  physicalClaimKey,
  type DeviceSpec,
  type ErrorBody,
  type WorkerReason,
} from '../api/index.js';
import { failUnlessWaiting, failWhileWaiting } from './fail-now.js';
import { heldRefusal, heldUnanswered, remembersNothing, type RequestMemos } from './memos.js';
import type { Explanation, RoutingPolicy, WorkerView } from '../api/index.js';
import { reasonsFor } from './reasons.js';

export interface WaitingRequest {
  key: string;
  spec: DeviceSpec & { noWait?: boolean | undefined };
  memos: RequestMemos;
  /** Its last Lease is still being deleted: it gets reasons but no dispatch this walk. */
  holdDispatch?: boolean;
  /** The message of the latest cannot-serve refusal, to fail with when no one else can serve. */
  lastCannotServe?: { code: string; message: string } | undefined;
}

export interface Fleet {
  /** Every known worker (every Worker object), sorted by name. */
  views: readonly WorkerView[];
  /** Each worker's view revision (views.ts, ViewRevisions): memos hold only at theirs. */
  viewRevisions: ReadonlyMap<string, number>;
}

export type WalkOutcome =
  | { kind: 'dispatch'; worker: string; stage: string }
  | { kind: 'fail'; error: ErrorBody }
  /** `workers` may be shared by several requests of the walk: never changed once made. */
  | { kind: 'wait'; workers: readonly WorkerReason[] };

export function walk(
  queue: readonly WaitingRequest[],
  fleet: Fleet,
  policy: RoutingPolicy,
): Map<string, WalkOutcome> {
  const outcomes = new Map<string, WalkOutcome>();
  // Per-walk claims (DESIGN.md §4.2): one virtual dispatch per worker; a physical pick holds the worker
  // only for other physical requests with the same match.
  const claimedVirtual = new Set<string>();
  const claimedPhysical = new Set<string>();
  const claimed = (worker: string, spec: DeviceSpec): boolean =>
    spec.physical === true
      ? claimedPhysical.has(physicalClaimKey(worker, spec))
      : claimedVirtual.has(worker);
  const claimsOf = (spec: DeviceSpec): number =>
    spec.physical === true ? claimedPhysical.size : claimedVirtual.size;

  // Requests with equal specs (one answer of the policy's) and nothing remembered of their own
  // have equal reasons while the walk's claims stay as they are: built once and shared. A walk of
  // thousands of waiting requests over a thousand workers would otherwise build millions of equal
  // lines, and ask the policy thousands of times for the same no (bench/routing.ts: 870 ms a walk
  // at 5000 x 1000).
  const sharedReasons = new Map<
    readonly Explanation[],
    { claims: number; workers: readonly WorkerReason[]; noPick: boolean }
  >();

  let everyoneAvailable: WorkerView[] | undefined;
  const hypothetical = (): WorkerView[] =>
    (everyoneAvailable ??= fleet.views.map((view) => ({
      ...view,
      connection: view.connection === 'incompatible' ? 'incompatible' : 'connected',
      drained: false,
    })));

  for (const request of queue) {
    const { spec, memos } = request;

    // A worker that said it can never serve this request is out for good; when no other worker
    // could ever serve it, the request fails with that worker's code. A physical request whose last
    // enrolled match is gone fails too (DESIGN.md §3.3). "Could ever": the table is asked as if every
    // worker were connected and undrained, so a fleet that is only busy, drained or disconnected
    // makes a request wait, never fail.
    if (memos.cannotServe.size > 0 || spec.physical === true) {
      const others = hypothetical().filter((view) => !memos.cannotServe.has(view.name));
      const error = failWhileWaiting(request, others, policy);
      if (error) {
        outcomes.set(request.key, { kind: 'fail', error });
        continue;
      }
    }

    const excluded = (view: WorkerView): boolean => {
      const revision = fleet.viewRevisions.get(view.name);
      return (
        memos.cannotServe.has(view.name) ||
        heldRefusal(memos, view, spec, revision) !== undefined ||
        heldUnanswered(memos, view.name, revision) ||
        claimed(view.name, spec)
      );
    };
    const explanations = policy.explain(spec, fleet.views);
    const shareable = remembersNothing(memos);
    const known = shareable ? sharedReasons.get(explanations) : undefined;
    const shared = known?.claims === claimsOf(spec) ? known : undefined;
    // The whole fleet's list with the exclusion, never a new list per request: the policy keeps
    // its answers per list, and a walk of thousands of requests would judge every view again. An
    // equal request just found no worker under the same claims: neither will this one.
    const pick =
      request.holdDispatch === true || shared?.noPick === true
        ? undefined
        : policy.select(spec, fleet.views, fleet.views.some(excluded) ? excluded : undefined);
    if (pick) {
      if (spec.physical === true) claimedPhysical.add(physicalClaimKey(pick.worker, spec));
      else claimedVirtual.add(pick.worker);
      outcomes.set(request.key, { kind: 'dispatch', worker: pick.worker, stage: pick.stage });
      continue;
    }

    const workers =
      shared?.workers ??
      reasonsFor({
        spec,
        views: fleet.views,
        viewRevisions: fleet.viewRevisions,
        explanations,
        memos,
        claimedEarlier: (worker) => claimed(worker, spec),
      });
    if (shareable)
      sharedReasons.set(explanations, {
        claims: claimsOf(spec),
        workers,
        // A request being withdrawn was not offered a worker: it says nothing of the next one.
        noPick: shared?.noPick === true || request.holdDispatch !== true,
      });
    if (spec.noWait === true && !request.holdDispatch) {
      outcomes.set(request.key, { kind: 'fail', error: failUnlessWaiting(spec) });
      continue;
    }
    outcomes.set(request.key, { kind: 'wait', workers });
  }
  return outcomes;
}
