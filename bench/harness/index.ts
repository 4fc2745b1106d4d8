// What the benchmarks share, one job a file: a control plane of their own (etcd and kube-apiserver,
// with the CRDs), the controller as a real process, a process of in-process fake-driver agents
// (bench/agent-host.ts), the API server's own count of writes, CPU time by process, a CRD read
// from crds/ and replaced, command-line options, the machine's name, progress lines and the
// statistics. The benchmarks print figures; nothing here asserts. What a benchmark starts here is
// stopped when it is interrupted (interrupt.ts).
export {
  FLEET_LABEL,
  startAgentHost,
  type AgentHost,
  type AgentHostOptions,
} from './agent-host-process.js';
export { apiserverClosedWatchers } from './apiserver-watchers.js';
export {
  apiserverWrites,
  totalWrites,
  writesBetween,
  type WriteCounts,
} from './apiserver-writes.js';
export { CommandLine } from './command-line.js';
export {
  applyCrds,
  createNamespace,
  startBenchControlPlane,
  waitUntilWatchable,
  type BenchControlPlane,
} from './control-plane.js';
export {
  parseMetrics,
  startController,
  type ControllerProcess,
  type ControllerStartOptions,
} from './controller-process.js';
export { cpuBetween, cpuSeconds } from './cpu-time.js';
export { Crd, crdPath, readCrd, replaceCrd, type Json } from './crd.js';
export { inParallel } from './in-parallel.js';
export { onInterrupt } from './interrupt.js';
export { cpuCount, machineName } from './machine.js';
export { OUT_DIR, REPO_ROOT, outDir } from './paths.js';
export { LoopLagPoller } from './loop-lag.js';
export { log, seconds } from './progress.js';
export { median, percentile } from './statistics.js';
export { startLogged, stopChild } from './processes.js';
export { waitUntil } from './wait-until.js';
