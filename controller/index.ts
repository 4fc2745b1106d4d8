// The simlock controller: reconciler, walk, routing, leader election wiring.
export { Reconciler, type ReconcilerOptions } from './reconciler.js';
export { CONTROLLER_DEFAULTS } from './options.js';
export { ControllerMetrics } from './metrics.js';
export { walk, type WaitingRequest, type Fleet, type WalkOutcome } from './walk.js';
export { reasonsFor } from './reasons.js';
export { buildWorker, parseHeartbeat } from './views.js';
export * from './routing/index.js';
export { controllerPermissions, LEADER_LEASE_NAME, type ControllerScope } from './permissions.js';
