#!/usr/bin/env bash
# Prints the bin folder of the pinned Node.js (tools/node-versions.env), downloading it when it is
# not cached: `npm pack node-<platform>@<version>` from the npm registry, its integrity checked
# against the pin, only bin/node kept, in a cache outside the repository keyed by version
# (~/.cache/simlock/node/<version>/bin). Any npm and any Node that runs npm will do for that, so a
# machine with only Node 20 gets Node 24 with nothing installed by hand (ADR 0012).
#
#   tools/ensure-node.sh        Node 24, what the suite, `npm run up` and the image run on
#   tools/ensure-node.sh 22     Node 22, for the unit project's check of package.json's engines
#   SIMLOCK_CACHE=/some/dir     put the cache elsewhere (default ~/.cache/simlock)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=node-versions.env
source "$here/node-versions.env"
case "${1:-24}" in
  24) version=$NODE_VERSION integrity=$NODE_INTEGRITY_LINUX_X64 ;;
  22) version=$NODE_22_VERSION integrity=$NODE_22_INTEGRITY_LINUX_X64 ;;
  *) echo "ensure-node: no pinned Node line $1 (24 or 22)" >&2; exit 2 ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 integrity="" ;;
  Darwin-arm64) platform=darwin-arm64 integrity="" ;;
  Darwin-x86_64) platform=darwin-x64 integrity="" ;;
  *) echo "ensure-node: no Node package for $(uname -s) $(uname -m)" >&2; exit 3 ;;
esac
cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
dir="$cache/node/$version-$platform"
if [ -x "$dir/bin/node" ]; then echo "$dir/bin"; exit 0; fi

mkdir -p "$cache/node"
# One download at a time per version: a second caller waits for the first instead of racing it.
exec 9>"$dir.lock"
flock 9
if [ -x "$dir/bin/node" ]; then echo "$dir/bin"; exit 0; fi

echo "ensure-node: downloading Node $version ($platform) from the npm registry" >&2
work=$(mktemp -d "$cache/node/download.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "node-$platform@$version" --silent --no-fund --no-audit >/dev/null)
tarball="$work/node-$platform-$version.tgz"
# Other platforms have no pin here: npm itself checks their tarball against the registry's sha512.
if [ -n "$integrity" ]; then
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  [ "$actual" = "$integrity" ] || {
    echo "ensure-node: node-$platform@$version has integrity $actual, pinned $integrity" >&2
    exit 1
  }
fi
mkdir -p "$work/out"
tar -xzf "$tarball" -C "$work/out" --strip-components=1 package/bin/node package/LICENSE
"$work/out/bin/node" --version >/dev/null
rm -rf "$dir"
mv "$work/out" "$dir"
echo "$dir/bin"
