#!/usr/bin/env bash
# Runs CI again and again on fresh clones, to find the tests that fail only now and then: each run
# clones REF into a new temporary folder (no node_modules, no .simlock, nothing left from the run
# before; the caches under ~/.cache/simlock are shared, as on a CI machine that keeps them), runs
# `CI=true bash .ci/run` there with its whole output in a log, and prints the run's number, exit
# code, wall time and the names of the tests that failed (vitest's FAIL lines), or the check that
# failed before the tests (eslint, tsc, prettier: tools/test.sh's "NAME: FAILED"). The last line
# sums up: `5 runs: 5 green` or `5 runs: 3 green, 2 red (2, 5)`.
#
#   tools/ci-repeat.sh [-n N] [-r REPO] [-k] [REF]
#
#   -n N     runs (5)
#   -r REPO  the repository to clone (default: the checkout this script lives in). Its REF is
#            resolved once, so every run tests the same commit even if the branch moves meanwhile.
#   -k       keep each run's clone (by default it is deleted after the run; its log is kept)
#   REF      a branch, tag or commit of REPO (main)
#
# The logs are in the folder printed first (CI_REPEAT_DIR chooses it). Exit code: 0 when every run
# was green, 1 otherwise. The runs are one after another: a whole-suite run wants both cores.
set -euo pipefail

runs=5
keep=no
repo=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
usage() { sed -n '/^#   tools/,/^#   REF/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; }
while getopts 'n:r:kh' option; do
  case $option in
    n) runs=$OPTARG ;;
    r) repo=$OPTARG ;;
    k) keep=yes ;;
    h)
      usage
      exit 0
      ;;
    *)
      usage
      exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
ref=${1:-main}
[ $# -le 1 ] || {
  usage
  exit 2
}
[[ $runs =~ ^[1-9][0-9]*$ ]] || {
  echo "ci-repeat: -n wants a number of runs, not $runs" >&2
  exit 2
}
commit=$(git -C "$repo" rev-parse --verify --quiet "$ref^{commit}") || {
  echo "ci-repeat: $repo has no commit $ref" >&2
  exit 2
}

out=${CI_REPEAT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/simlock-ci-repeat.XXXXXX")}
mkdir -p "$out"
echo "ci-repeat: $runs runs of $repo $ref ($(git -C "$repo" log -1 --format='%h %s' "$commit")); logs in $out"

# The names of what failed in a run's log: vitest's "FAIL  project  file > suite > test" lines
# (once each: a file's failure is listed again in the summary), else the "×" lines of failed tests,
# else tools/test.sh's failed checks; colours taken out first.
failures() {
  local plain
  plain=$(sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1")
  local found
  found=$(grep -E '^ *FAIL ' <<<"$plain" | sed -E 's/^ *FAIL +//; s/ +/ /g' | awk '!seen[$0]++' || true)
  [ -n "$found" ] || found=$(grep -E '^ *(×|✗) ' <<<"$plain" | sed -E 's/^ *(×|✗) +//' | awk '!seen[$0]++' || true)
  [ -n "$found" ] || found=$(grep -E '^[a-z0-9-]+: FAILED' <<<"$plain" || true)
  [ -n "$found" ] || found="(no failing test named; the log's end:)"$'\n'"$(tail -n 5 <<<"$plain")"
  printf '%s\n' "$found"
}

red=()
for ((run = 1; run <= runs; run++)); do
  clone="$out/run-$run"
  log="$out/run-$run.log"
  rm -rf "$clone"
  started=$SECONDS
  code=0
  {
    git clone --quiet --no-checkout "$repo" "$clone" &&
      git -C "$clone" checkout --quiet --detach "$commit" &&
      (cd "$clone" && CI=true bash .ci/run)
  } >"$log" 2>&1 || code=$?
  took=$((SECONDS - started))
  printf 'run %d: exit %d, %dm%02ds\n' "$run" "$code" $((took / 60)) $((took % 60))
  if [ "$code" != 0 ]; then
    red+=("$run")
    failures "$log" | sed 's/^/    /'
  fi
  # Said even on a green run: a tier that was skipped is not a tier that passed.
  grep -h 'kind tier: DID NOT RUN' "$log" | sed 's/^/    /' || true
  [ "$keep" = yes ] || rm -rf "$clone"
done

green=$((runs - ${#red[@]}))
if [ ${#red[@]} -eq 0 ]; then
  echo "$runs runs: $green green"
else
  echo "$runs runs: $green green, ${#red[@]} red ($(
    IFS=,
    echo "${red[*]}" | sed 's/,/, /g'
  ))"
  exit 1
fi
