// The exec proxy.
export { createProxyApp, type ProxyOptions } from './server.js';
export { ProxyMetrics, type ExecOutcome } from './metrics.js';
export { reviewToken, mayExec, bearerToken, type Caller } from './auth.js';
export {
  ActivityRecorder,
  leaseStatusActivityStore,
  type ActivityRecord,
  type ActivityRecorderOptions,
  type ActivityStore,
} from './activity.js';
export { proxyPermissions } from './permissions.js';
export { AgentTunnels, serveTunnels, type TunnelServerOptions } from './tunnel-server.js';
