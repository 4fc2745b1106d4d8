#!/usr/bin/env bash
# Checks .github/workflows/*.yml with actionlint (the GitHub Actions schema, expressions, runner
# labels, and the `run:` scripts through shellcheck when it is on PATH: `apt-get install
# shellcheck`): nothing can publish from the project's machines, so the release workflow is
# checked here instead of run. actionlint is the one pinned in actionlint/go.mod (go-tool.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
actionlint=$("$here/go-tool.sh" actionlint)
# actionlint checks the run: scripts with shellcheck when it is on PATH: Debian's, installed here
# when missing and this is root (as tools/ensure-chromium.sh installs Chromium).
if ! command -v shellcheck >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "lint-workflows: installing Debian's shellcheck (apt-get)" >&2
  apt-get install -y -qq shellcheck >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq shellcheck >/dev/null 2>&1; } || true
fi
command -v shellcheck >/dev/null || echo "lint-workflows: no shellcheck: the run: scripts are NOT checked" >&2
cd "$here/../.."
"$actionlint" .github/workflows/*.yml
echo "lint-workflows: .github/workflows/*.yml pass $("$actionlint" -version | head -1)"
