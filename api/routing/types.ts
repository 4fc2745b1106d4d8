// The shapes routing reads and answers. Routing is pure: it reads worker views and a request's
// device spec, and answers a pick, reasons, or a fleet verdict. Shapes of the contract (the
// request, the worker's status, reasons, error codes) come from api/, never from a copy.
import type { DeviceSpec, ErrorCode, ReasonEntry, WorkerStatus } from '../index.js';

/** How the controller reaches a worker: its heartbeat renewed, lapsed, or a protocol it cannot speak. */
export type Connection = 'connected' | 'disconnected' | 'incompatible';

/**
 * What routing reads about one worker. The controller builds a new view whenever anything in it
 * changes and never mutates one it has handed over: the pipeline reuses what the stages said about
 * a view object (see pipeline.ts).
 */
export interface WorkerView {
  readonly name: string;
  readonly connection: Connection;
  readonly drained: boolean;
  /** The agent's view; absent, or without catalog or capacity, until the agent has read it. */
  readonly status?: WorkerStatus | undefined;
}

/** A filter stage: a reason to drop the worker for this request, or undefined to keep it. */
export interface FilterStage {
  readonly name: string;
  readonly kind: 'filter';
  /** False: the pipeline skips this stage for a physical request. */
  readonly appliesToPhysical: boolean;
  readonly check: (worker: WorkerView, request: DeviceSpec) => ReasonEntry | undefined;
}

/** A rank stage: a score of at least 0, and optionally why a worker it scores 0 cannot take it. */
export interface RankStage {
  readonly name: string;
  readonly kind: 'rank';
  /** False: the pipeline skips this stage for a physical request. */
  readonly appliesToPhysical: boolean;
  readonly score: (worker: WorkerView, request: DeviceSpec) => number;
  readonly zeroReason?: (worker: WorkerView, request: DeviceSpec) => ReasonEntry | undefined;
}

export type Stage = FilterStage | RankStage;

/** The worker `select` picks, and the rank stage that decided it (for events: "warm-hit"). */
export interface Pick {
  readonly worker: string;
  readonly stage: string;
}

/**
 * Why one worker would not take the request, as far as the stages can tell: dropped by a filter,
 * scored 0 by a rank that says why, or nothing against it. The controller turns these into the
 * per-worker reasons of a waiting request, together with its own memos.
 */
export type Explanation =
  | {
      readonly worker: string;
      readonly kind: 'dropped';
      readonly stage: string;
      readonly reason: Readonly<ReasonEntry>;
    }
  | {
      readonly worker: string;
      readonly kind: 'ranked-zero';
      readonly stage: string;
      readonly reason: Readonly<ReasonEntry>;
    }
  | { readonly worker: string; readonly kind: 'none' };

/** The fleet table's answer for a new request: fail at once, or route (and wait if need be). */
export type Assessment =
  | {
      readonly kind: 'fail';
      readonly code: ErrorCode;
      readonly message: string;
      readonly details?: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'route' };

/** What the controller's walk calls; a different policy can be plugged in without touching it. */
export interface RoutingPolicy {
  /** The stages in order, for tests and for people. */
  readonly stages: readonly Stage[];
  /** The pick; with `excluded`, the pick among the views it does not exclude. */
  readonly select: (
    request: DeviceSpec,
    views: readonly WorkerView[],
    excluded?: (view: WorkerView) => boolean,
  ) => Pick | undefined;
  readonly explain: (request: DeviceSpec, views: readonly WorkerView[]) => readonly Explanation[];
  readonly assess: (request: DeviceSpec, views: readonly WorkerView[]) => Assessment;
}
