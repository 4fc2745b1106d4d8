#!/usr/bin/env bash
# go-tool.sh actionlint|krew: builds the release's Go tools from the modules pinned beside this
# script (actionlint/, krew/) into ~/.cache/simlock/go-tools/<name>-<version>/, once per version,
# and prints the binary's path. Exit 3 when there is no go to build with.
#   actionlint   checks .github/workflows/ (lint-workflows.sh)
#   krew         installs the built archive with the filled manifest (e2e/release-binary.test.ts)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "${1:-}" in
  actionlint) module=github.com/rhysd/actionlint package=github.com/rhysd/actionlint/cmd/actionlint ;;
  krew) module=sigs.k8s.io/krew package=sigs.k8s.io/krew/cmd/krew ;;
  *) echo "usage: go-tool.sh actionlint|krew" >&2; exit 64 ;;
esac
version=$(sed -n "s#^require $module \(v[0-9.]*\)\$#\1#p" "$here/$1/go.mod")
cache=${SIMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simlock}
bin="$cache/go-tools/$1-$version/$1"
if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "go-tool: no go on PATH to build $1" >&2; exit 3; }
  echo "go-tool: building $1 $version (cold: a minute or two)" >&2
  mkdir -p "$(dirname "$bin")"
  (cd "$here/$1" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" \
    -o "$bin.$$" "$package")
  mv "$bin.$$" "$bin"
fi
echo "$bin"
