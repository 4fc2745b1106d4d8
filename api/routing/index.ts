// Routing: pure functions over worker views (DESIGN.md §3). The controller's walk uses a
// RoutingPolicy; the stages and the pipeline are exported for other policies and for tests.
export type {
  Assessment,
  Connection,
  Explanation,
  FilterStage,
  Pick,
  RankStage,
  RoutingPolicy,
  Stage,
  WorkerView,
} from './types.js';
export { createRoutingPolicy, explain, select, STAGES } from './policy.js';
export { createPipeline, type Pipeline } from './pipeline.js';
export { assess } from './assess.js';
export { takesRequests } from './stages/takes-requests.js';
export {
  applyUnblockChange,
  findUnblocks,
  type HeldLease,
  type UnblockQuestion,
} from './unblock.js';
export { answerWhy, answerWhyOf, heldLeases, whyViews, type WhyRequest } from './why.js';
