// Shared machinery of the simlock processes (controller, agent, proxy, cli, console) and the typed
// client: the Kubernetes REST client, informers, leader election, JSON logs, the exec proxy's
// client. It imports only api/.
export * from './kube-client.js';
export * from './informer.js';
export * from './paths.js';
export * from './package-root.js';
export * from './screenshot.js';
export * from './request-lease.js';
export * from './exec-client.js';
export * from './log.js';
export * from './clock.js';
export * from './leader-election.js';
export * from './http.js';
export * from './access-review.js';
export * from './token-review-cache.js';
export * from './workqueue.js';
export * from './merge-patch.js';
export * from './status-update.js';
export * from './user-agent.js';
export * from './grant-progress-text.js';
export * from './device-recovery-text.js';
export * from './workqueue-metrics.js';
export * from './metric-set.js';
export * from './permission-check.js';
export * from './tunnel-mux.js';
export * from './worker-unquarantine.js';
