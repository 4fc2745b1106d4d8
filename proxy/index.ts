// The exec proxy.
export { createProxyApp, ProxyMetrics, type ProxyOptions } from './server.js';
export { reviewToken, mayExec, bearerToken, type Caller } from './auth.js';
export {
  ActivityRecorder,
  leaseStatusActivityWriter,
  type ActivityRecord,
  type ActivityRecorderOptions,
  type ActivityWriter,
} from './activity.js';
export { proxyPermissions } from './permissions.js';
