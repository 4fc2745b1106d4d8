#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and helm from the
# pinned Go modules beside this script, into a cache outside the repository keyed by version.
# Prints the bin folder on stdout. A second run with the same versions builds nothing.
#
#   tools/controlplane/build.sh            build if needed, print the bin folder
#   SIMLOCK_CACHE=/some/dir build.sh       put the cache elsewhere (default ~/.cache/simlock)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
key="k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}"
bin="$cache/controlplane/$key/bin"
wanted=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd helm)

ready() { for b in "${wanted[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
if ready; then echo "$bin"; exit 0; fi

mkdir -p "$bin" "$cache/controlplane/logs"
# One build at a time per cache: a second caller waits for the first instead of racing it.
exec 9>"$cache/controlplane/$key.lock"
flock 9
if ready; then echo "$bin"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "controlplane: $*" >&2; }
started=$(date +%s)

minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
k8s_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

build() { # build <module dir> <output> <ldflags> <packages...>
  local dir=$1 out=$2 flags=$3
  shift 3
  (cd "$here/$dir" && go build -trimpath -ldflags "-s -w $flags" -o "$out" "$@")
}

log "building Kubernetes $KUBERNETES_VERSION (cold: about 15-25 minutes on 2 cores)"
build kubernetes "$bin/" "$k8s_ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

log "building etcd $ETCD_VERSION"
build etcd "$bin/etcd" "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" go.etcd.io/etcd/server/v3

log "building helm $HELM_VERSION"
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
done
build helm "$bin/helm" "$helm_ldflags" helm.sh/helm/v3/cmd/helm

log "built in $(($(date +%s) - started)) s into $bin"
echo "$bin"
