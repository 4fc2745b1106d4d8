// What code outside e2e/ (the soak benchmark) uses of the end-to-end machinery: the local fleet's
// proxy: its identity and its arguments.
export { PROXY_SERVICE_ACCOUNT, localProxyArgs, proxyToken } from './fleet/local-fleet.js';
