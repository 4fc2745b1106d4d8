#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the kind tier of the tests (never part of the product).
# A running engine is used as it is. Without one, on Debian as root, it installs Debian's docker.io
# and starts dockerd; where the capability bounding set lacks CAP_SYS_RESOURCE (privileged
# containers then fail), dockerd gets runc-wrapper.sh as its default runtime. The dockerd it starts
# gives containers 127.0.0.1 as their only upstream DNS server: nothing in a test cluster resolves,
# and so reaches, an address outside this machine (builds that need the network use the host's).
# Exit 0: the engine answers. Exit 3: it cannot be had here; the last line of stderr says why.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
state="$cache/kind/dockerd"
log() { echo "docker-engine: $*" >&2; }
missing() { log "MISSING: $*"; exit 3; }

answers() { docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }
if command -v docker >/dev/null && answers; then exit 0; fi

[ "$(id -u)" = 0 ] || missing "no Docker engine answers, and installing one needs root (start Docker, or run as root on Debian)"
grep -qs '^ID=debian' /etc/os-release || missing "no Docker engine answers, and this is not Debian (start Docker yourself)"

if ! command -v dockerd >/dev/null || ! command -v jq >/dev/null; then
  log "installing docker.io and jq from Debian"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt may be running on a shared machine: wait for its lock rather than fail.
  apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 || missing "apt-get update failed"
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends docker.io jq >&2 \
    || missing "apt-get install docker.io jq failed"
fi

mkdir -p "$state"
exec 9>"$state.lock"
flock 9
if answers; then exit 0; fi
flags=(--dns 127.0.0.1)
bounding=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
if [ $(((0x$bounding >> 24) & 1)) -eq 0 ]; then
  # dockerd keeps the path: copy the wrapper out of the checkout so removing it breaks nothing.
  install -m 0755 "$here/runc-wrapper.sh" "$state/runc-wrapper"
  flags+=(--add-runtime "simlock-runc=$state/runc-wrapper" --default-runtime simlock-runc)
fi
log "starting dockerd ${flags[*]} (log: $state/dockerd.log)"
setsid nohup dockerd "${flags[@]}" >"$state/dockerd.log" 2>&1 </dev/null &
for _ in $(seq 1 120); do
  if answers; then exit 0; fi
  sleep 0.5
done
tail -n 20 "$state/dockerd.log" >&2
missing "dockerd did not answer within 60 s (log: $state/dockerd.log)"
