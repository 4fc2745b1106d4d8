#!/usr/bin/env bash
# tsc --noEmit of one project (default: the root tsconfig.json), incremental across runs and clones.
#
# tsc's build info records, for every file of the program (node_modules' declarations included),
# a hash of its text and what it depends on; a later run re-checks only the files whose hash
# changed and those that depend on them, and starts over when the compiler options or version
# differ. So a fresh clone whose sources match a run before checks in seconds, and any change is
# still checked in full. The build info names files relative to itself, so it is used from
# .simlock/tsc/ inside the checkout (the same relative names in every clone) and kept between runs
# in the cache outside the repository, written aside and renamed over so that two runs at once
# each leave a whole file.
set -euo pipefail
cd "$(dirname "$0")/.."
project=${1:-tsconfig.json}
name=$(printf '%s' "$project" | tr '/.' '__')
tsc_version=$(node -p 'require("typescript/package.json").version')
cache="${XDG_CACHE_HOME:-$HOME/.cache}/simlock/tsc/$tsc_version"
local_info=".simlock/tsc/$name.tsbuildinfo"
mkdir -p "$cache" .simlock/tsc
if [ -f "$cache/$name.tsbuildinfo" ] && [ ! -f "$local_info" ]; then
  cp "$cache/$name.tsbuildinfo" "$local_info"
fi
npx tsc --noEmit -p "$project" --incremental --tsBuildInfoFile "$local_info"
# Only a run that passed is kept (a failing one is rare and its info would be as good, but a
# passing one is the state worth starting from).
cp "$local_info" "$cache/$name.tsbuildinfo.$$"
mv "$cache/$name.tsbuildinfo.$$" "$cache/$name.tsbuildinfo"
