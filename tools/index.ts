// What code outside tools/ (the benchmarks) uses of the tools: a control plane of etcd and
// kube-apiserver from the pinned binaries, and a free port. Only modules that do nothing when
// imported belong here (the tools' programs run their work at the top level).
export { freePort, startControlPlane, type ControlPlane } from './controlplane/start.js';
