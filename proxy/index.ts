// The exec proxy.
export { createProxyApp, ProxyMetrics, type ProxyOptions } from './server.js';
export { reviewToken, mayExec, bearerToken, type Caller } from './auth.js';
export { ActivityRecorder, type ActivityRecorderOptions } from './activity.js';
