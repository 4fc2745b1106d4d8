// What code outside tools/ (the benchmarks) uses of the tools: a control plane of etcd and
// kube-apiserver from the pinned binaries, and a free port. Only modules that do nothing when
// imported belong here (the tools' programs run their work at the top level).
export { freePort, startControlPlane, type ControlPlane } from './controlplane/start.js';
// The plugin as the release's single binary, for this machine, built once per source hash.
export { hostPluginBinary } from './release/plugin-release.js';
export { writeArchive } from './release/archive.js';
export { fillKrewManifest } from './release/krew-manifest.js';
export { archiveName, hostPlatform } from './release/platforms.js';
