// The estimate of when a waiting request is granted (issue 37): pure estimator, the walk's
// estimates, and the history they read.
export { estimateGrant, median, MIN_SAMPLES, type Estimate, type LeaseEnd } from './estimate.js';
export type { ClassHistory, EstimateInput, HistoryMedians, LeaseEnds } from './estimate.js';
export { GrantHistory, HISTORY_WINDOW_MS } from './history.js';
export { classKey, classLabel, estimateQueue, settle } from './queue-estimates.js';
export type { HeldLease, WaitingForEstimate } from './queue-estimates.js';
