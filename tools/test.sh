#!/usr/bin/env bash
# The whole test suite, as `npm test` runs it on a fresh clone: installs dependencies when they are
# missing or stale, builds the control plane when it is not cached, then lint, types, formatting,
# unit tests and the cluster and end-to-end tests against a real kube-apiserver and etcd (the
# console's in a real Chromium, installed from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh
tools/controlplane/build.sh >/dev/null
tools/ensure-chromium.sh >/dev/null
npx eslint --max-warnings 0 .
npx tsc --noEmit -p .
npx tsc --noEmit -p console/web
npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "prettier: run npm run format" >&2; exit 1; }
npx vitest run "$@"
