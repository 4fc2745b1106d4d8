// The contract: shapes, reasons, errors and the pure rules controller and agent share.
export * from './names.js';
export * from './reasons.js';
export * from './errors.js';
export * from './schemas.js';
export * from './match.js';
export * from './view-key.js';
export * from './refusal.js';
export * from './summary.js';
export * from './worker-reasons.js';
export * from './exec.js';
export * from './slots.js';
export * from './lifetime.js';
export * from './duration.js';
export * from './tunnel.js';
export * from './usage-history.js';
export * from './unblock.js';
export * from './routing/index.js';
