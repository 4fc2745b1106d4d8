#!/usr/bin/env bash
# Builds what the kind tier needs, offline, into a cache outside the repository keyed by version:
# the kind binary from its pinned Go module, and a kind node image for the Kubernetes version of
# tools/controlplane (README.md beside this file says what is in it and why). Prints, on stdout,
#   KIND=<path of kind>  KIND_NODE_IMAGE=<image for kind create cluster --image>
#   NODE_IMAGE=<Node 24 base for the Dockerfile's NODE_IMAGE build argument>
#   CONTROLPLANE_BIN=<the folder of kubectl and helm, from tools/controlplane>
# A second run with the same versions and recipe builds nothing.
#
# Where kindest/node can be had, it is used instead of building one: set SIMLOCK_KIND_NODE_IMAGE to
# it (e.g. after `docker pull kindest/node:<a v1.34 tag>`). NODE_IMAGE is node:24-slim when that is
# present locally. Exit 3: something this needs is missing; the last line of stderr names it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../controlplane/versions.env
source "$here/../controlplane/versions.env"
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
dir="$cache/kind/kind-${KIND_VERSION}_k8s-${KUBERNETES_VERSION}_coredns-${COREDNS_VERSION}"
bin="$dir/bin"
log() { echo "kind-build: $*" >&2; }
missing() { log "MISSING: $*"; exit 3; }
started=$(date +%s)

"$here/docker-engine.sh"
command -v go >/dev/null || missing "go (1.24 or later) on PATH, to build kind"
controlplane_bin=$("$here/../controlplane/build.sh")

mkdir -p "$bin"
exec 9>"$dir.lock"
flock 9
export CGO_ENABLED=0 GOFLAGS=-mod=mod

if [ ! -x "$bin/kind" ]; then
  log "building kind $KIND_VERSION"
  (cd "$here/kind" && go build -trimpath -ldflags "-s -w" -o "$bin/kind" sigs.k8s.io/kind)
fi

kind_node_image=${SIMLOCK_KIND_NODE_IMAGE:-}
node_image=node:24-slim
docker image inspect "$node_image" >/dev/null 2>&1 || node_image=""
if [ -n "$kind_node_image" ] && [ -n "$node_image" ]; then
  printf 'KIND=%s\nKIND_NODE_IMAGE=%s\nNODE_IMAGE=%s\nCONTROLPLANE_BIN=%s\n' \
    "$bin/kind" "$kind_node_image" "$node_image" "$controlplane_bin"
  exit 0
fi

# Everything else is built here, from Debian packages and Go modules.
[ "$(id -u)" = 0 ] || missing "kindest/node and node:24-slim cannot be had here, and building them needs root (debootstrap)"
command -v debootstrap >/dev/null || {
  log "installing debootstrap from Debian"
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap >&2 ||
    missing "debootstrap (apt-get install debootstrap failed)"
}

node_binaries=(kubelet kubeadm kube-proxy)
for name in "${node_binaries[@]}"; do
  [ -x "$bin/$name" ] && continue
  log "building kubelet, kubeadm and kube-proxy $KUBERNETES_VERSION (cold: about 10 minutes on 2 cores)"
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  flags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$here/../controlplane/kubernetes" && go build -trimpath -ldflags "-s -w $flags" -o "$bin/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kube-proxy)
  break
done
if [ ! -x "$bin/pause" ]; then
  (cd "$here/pause" && go build -trimpath -ldflags "-s -w" -o "$bin/pause" .)
fi
if [ ! -x "$bin/coredns" ]; then
  log "building CoreDNS $COREDNS_VERSION"
  (cd "$here/coredns" && go build -trimpath -ldflags "-s -w" -o "$bin/coredns" .)
fi

# The images are named by the recipe: any change to these files makes new ones.
recipe=$(cd "$here" && cat build.sh images.sh runc-wrapper.sh versions.env ../controlplane/versions.env \
  $(find node pause coredns -type f | sort) | sha256sum | cut -c1-12)
# shellcheck source=images.sh
source "$here/images.sh"
[ -n "$node_image" ] || node_image=$(build_node_base)
[ -n "$kind_node_image" ] || kind_node_image=$(build_kind_node_image)
log "ready in $(($(date +%s) - started)) s"
printf 'KIND=%s\nKIND_NODE_IMAGE=%s\nNODE_IMAGE=%s\nCONTROLPLANE_BIN=%s\n' \
  "$bin/kind" "$kind_node_image" "$node_image" "$controlplane_bin"
