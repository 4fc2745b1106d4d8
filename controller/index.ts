// The simlock controller: reconciler, walk, routing, leader election wiring.
export { Reconciler, type ReconcilerOptions } from './reconciler.js';
export { CONTROLLER_DEFAULTS } from './options.js';
export { ControllerMetrics } from './metrics.js';
export { ApiContact } from './api-contact.js';
export { walk, type WaitingRequest, type Fleet, type WalkOutcome } from './walk.js';
export { reasonsFor } from './reasons.js';
// The grant estimates of a walk, for bench/estimates.ts.
export {
  estimateQueue,
  type ClassHistory,
  type HeldLease,
  type WaitingForEstimate,
} from './estimate/index.js';
export { buildWorker, parseHeartbeat } from './views.js';
// Routing is pure and shared (api/routing/, ADR 0026); re-exported for the benchmarks and tests.
export {
  assess,
  createPipeline,
  createRoutingPolicy,
  explain,
  select,
  STAGES,
  type Assessment,
  type Connection,
  type Explanation,
  type FilterStage,
  type Pick,
  type Pipeline,
  type RankStage,
  type RoutingPolicy,
  type Stage,
  type WorkerView,
} from '../api/index.js';
export { controllerPermissions, LEADER_LEASE_NAME, type ControllerScope } from './permissions.js';
