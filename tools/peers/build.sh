#!/usr/bin/env bash
# Builds the peers the grants benchmark compares simlock with, from the pinned Go modules beside
# this script, into a cache outside the repository keyed by version (as tools/controlplane does):
#   kwok          kwok's command (sigs.k8s.io/kwok/cmd/kwok): plays the kubelets of fake Nodes; and
#                 its "fast" Stages copied from the same module (kustomize/stage/{node,pod}/fast)
#   kueue         Kueue's minimalkueue (core controllers and scheduler, no webhooks), and Kueue's
#                 CRDs copied from the same module (config/components/crd/bases)
# Prints the peer's folder on stdout (bin/ inside; stages/ for kwok, crds/ for kueue). A second run with the same
# version builds nothing. Go builds run at the lowest priority: the machine is shared.
#
#   tools/peers/build.sh kwok|kueue        build one if needed, print its folder
#   tools/peers/build.sh                   build both, print both folders
#   SIMLOCK_CACHE=/some/dir build.sh ...   put the cache elsewhere (default ~/.cache/simlock)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
export CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "peers: $*" >&2; }

# build_peer <name> <version> <check> <build function>
build_peer() {
  local name=$1 version=$2 ready=$3 make=$4
  local dir="$cache/peers/$name-$version"
  if "$ready" "$dir"; then echo "$dir"; return; fi
  mkdir -p "$dir/bin"
  # One build at a time per cache: a second caller waits for the first instead of racing it.
  exec 9>"$cache/peers/$name-$version.lock"
  flock 9
  if ! "$ready" "$dir"; then
    local started
    started=$(date +%s)
    log "building $name $version (cold: a few minutes on 2 cores)"
    "$make" "$dir" "$version"
    log "built $name in $(($(date +%s) - started)) s into $dir"
  fi
  exec 9>&-
  echo "$dir"
}

# copy_from_module <module dir> <module> <destination> <paths inside the module...>
copy_from_module() {
  local module_dir=$1 module=$2 destination=$3 from
  shift 3
  from=$(cd "$here/$module_dir" && go list -m -f '{{.Dir}}' "$module")
  rm -rf "$destination"
  mkdir -p "$destination"
  for path in "$@"; do cp "$from"/$path "$destination/"; done
  chmod -R u+w "$destination"
}

kwok_ready() { [ -x "$1/bin/kwok" ] && [ -f "$1/stages/pod-ready.yaml" ]; }
kwok_make() {
  (cd "$here/kwok" && nice -n 19 go build -trimpath -ldflags "-s -w" \
    -o "$1/bin/kwok" sigs.k8s.io/kwok/cmd/kwok)
  copy_from_module kwok sigs.k8s.io/kwok "$1/stages" \
    'kustomize/stage/node/fast/node-initialize.yaml' 'kustomize/stage/pod/fast/pod-*.yaml'
}

kueue_ready() { [ -x "$1/bin/minimalkueue" ] && [ -f "$1/crds/kueue.x-k8s.io_workloads.yaml" ]; }
kueue_make() {
  (cd "$here/kueue" && nice -n 19 go build -trimpath -ldflags "-s -w" \
    -o "$1/bin/minimalkueue" sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue)
  copy_from_module kueue sigs.k8s.io/kueue "$1/crds" 'config/components/crd/bases/*.yaml'
}

case "${1:-all}" in
  kwok) build_peer kwok "$KWOK_VERSION" kwok_ready kwok_make ;;
  kueue) build_peer kueue "$KUEUE_VERSION" kueue_ready kueue_make ;;
  all)
    build_peer kwok "$KWOK_VERSION" kwok_ready kwok_make
    build_peer kueue "$KUEUE_VERSION" kueue_ready kueue_make
    ;;
  *)
    echo "usage: $0 [kwok|kueue]" >&2
    exit 2
    ;;
esac
