// The routing policy the controller receives: the stages in order, run by the pipeline, and the
// fleet table. Another policy (other stages, another table) plugs in without touching the walk.
import { assess } from './assess.js';
import { createPipeline } from './pipeline.js';
import { canServe } from './stages/can-serve.js';
import { freeCapacity } from './stages/free-capacity.js';
import { freeSlot } from './stages/free-slot.js';
import { hasCapabilities } from './stages/has-capabilities.js';
import { healthy } from './stages/healthy.js';
import { idleQueue } from './stages/idle-queue.js';
import { ramBudget } from './stages/ram-budget.js';
import { takesRequests } from './stages/takes-requests.js';
import { warmHit } from './stages/warm-hit.js';
import type { RoutingPolicy, Stage } from './types.js';

/** DESIGN.md §3: who can take it at all, then who can take it now, then who is best. */
export const STAGES: readonly Stage[] = [
  takesRequests,
  hasCapabilities,
  canServe,
  healthy,
  idleQueue,
  warmHit,
  freeSlot,
  ramBudget,
  freeCapacity,
];

export function createRoutingPolicy(stages: readonly Stage[] = STAGES): RoutingPolicy {
  const pipeline = createPipeline(stages);
  return {
    stages,
    select: pipeline.select,
    explain: pipeline.explain,
    assess,
  };
}

// The default policy's select and explain, for callers that need no other policy.
const defaultPolicy = createRoutingPolicy();
export const select = defaultPolicy.select;
export const explain = defaultPolicy.explain;
