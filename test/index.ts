// What code outside test/ (the benchmarks) uses of the tests' machinery: objects built for a
// Worker's status, the stand-ins of the device tools, processes started from their bundles, the
// cluster tier's agents, replicas and network partitions, and a browser. Test files inside test/,
// e2e/ and the component folders import the files themselves.
export { launchBrowser, type TestBrowser } from './browser.js';
export { FLEET_LABEL } from './cluster/fleet.js';
export { AGENT_RULES, grant, tunnelRule } from './cluster/agent-rbac.js';
export { startAgent, type AgentProcess } from './cluster/agents.js';
export { NetworkPartition, pairAddresses, partitionsUnavailable } from './cluster/partition.js';
export { Replicas } from './cluster/replicas.js';
export { allowLeaseExec } from './cluster/role-bindings.js';
export { serviceAccountToken } from './cluster/service-account-token.js';
export { iosCapacity, iosStatus, iphoneSimulator } from './fixtures/workers.js';
export { ensureBundles, launchArgs } from './launch.js';
export { StandIns, type StandInRule } from './stand-ins/stand-in.js';
export { SimctlStandIn } from './stand-ins/simctl-stand-in.js';
export { androidWorld } from './stand-ins/android-world.js';
export { makeCa, makeLeaf } from './tls-certificates.js';
