// What code outside e2e/ (the soak benchmark) uses of the end-to-end machinery: the local fleet's
// proxy identity.
export { PROXY_SERVICE_ACCOUNT, proxyToken } from './fleet/local-fleet.js';
