#!/usr/bin/env bash
# The whole test suite, as `npm test` runs it on a fresh clone, on the pinned Node.js 24 (ADR 0012;
# downloaded from the npm registry into a cache when missing, whatever Node the machine has) with
# its version printed first: installs dependencies when they are missing or stale, builds the
# control plane when it is not cached, then lint beside types (incremental, tools/typecheck.sh),
# formatting and the unit project on Node 22 (the oldest line package.json's engines promises),
# then on Node 24 the unit tests, the cluster and end-to-end tests against a real kube-apiserver
# and etcd (the console's in a real Chromium, installed from Debian's packages when missing), and
# the kind tier (e2e/kind: the image and the chart's pods on a kind cluster; tools/kind builds
# what it needs). The last line says whether the kind tier ran: where it cannot, it is skipped,
# never passed in silence.
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything below, and every process it starts, finds this Node first on PATH.
PATH="$(tools/ensure-node.sh):$PATH"
export PATH
node -e 'console.log(`node ${process.version} (${process.execPath})`)'
tools/ensure-deps.sh
tools/controlplane/build.sh >/dev/null
tools/ensure-chromium.sh >/dev/null

# The checks before the tests run in two lanes at once (two cores), each step's output kept in
# .simlock/checks/STEP.log and shown when it fails.
checks=.simlock/checks
rm -rf "$checks"
mkdir -p "$checks"
check() {
  local name=$1
  shift
  local started=$SECONDS
  if "$@" >"$checks/$name.log" 2>&1; then
    echo "$name: ok ($((SECONDS - started)) s)"
  else
    echo "$name: FAILED ($((SECONDS - started)) s):" >&2
    cat "$checks/$name.log" >&2
    return 1
  fi
}
prettier_check() {
  npx prettier --check . >/dev/null || {
    npx prettier --list-different .
    echo "prettier: run npm run format"
    return 1
  }
}
unit_on_node22() {
  local node22
  node22=$(tools/ensure-node.sh 22)
  PATH="$node22:$PATH" node -e 'console.log(`unit project on node ${process.version}`)'
  PATH="$node22:$PATH" npx vitest run --project unit
}
# Balanced by their times in whole-suite runs with warm caches (eslint 42-64 s, prettier 14-27 s |
# tsc 5-8 s, tsc-console-web 3-7 s, unit-node22 about 41 s, actionlint under 1 s once built; the
# type checks are incremental from the cache, tools/typecheck.sh).
lane_lint() {
  local failed=0
  check eslint npx eslint --max-warnings 0 . || failed=1
  check prettier prettier_check || failed=1
  return "$failed"
}
lane_rest() {
  local failed=0
  check tsc tools/typecheck.sh || failed=1
  check tsc-console-web tools/typecheck.sh console/web || failed=1
  # .github/workflows/ cannot run here: actionlint checks them (built once from its Go module).
  check actionlint tools/release/lint-workflows.sh || failed=1
  # The unit project on Node 22 (engines' oldest line), when the whole suite runs.
  if [ "$whole_suite" = yes ]; then check unit-node22 unit_on_node22 || failed=1; fi
  return "$failed"
}
whole_suite=no
[ $# -eq 0 ] && whole_suite=yes
lane_lint &
lint_pid=$!
lanes_failed=0
lane_rest || lanes_failed=1
wait "$lint_pid" || lanes_failed=1
[ "$lanes_failed" = 0 ] || { echo "the checks before the tests failed (above)" >&2; exit 1; }
status_file=.simlock/kind-tier-status
rm -f "$status_file"
code=0
npx vitest run "$@" || code=$?
if [ -f "$status_file" ]; then
  case "$(cat "$status_file")" in
    ran) echo "kind tier: ran (e2e/kind)" ;;
    *) echo "kind tier: DID NOT RUN: $(sed 's/^did not run: //' "$status_file")" >&2 ;;
  esac
fi
exit "$code"
