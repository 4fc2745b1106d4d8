#!/usr/bin/env bash
# Checks .github/workflows/*.yml with actionlint (the GitHub Actions schema, expressions, runner
# labels, and the `run:` scripts through shellcheck when it is on PATH: `apt-get install
# shellcheck`): nothing can publish from the project's machines, so the release workflow is
# checked here instead of run. actionlint is the one pinned in actionlint/go.mod (go-tool.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
actionlint=$("$here/go-tool.sh" actionlint)
command -v shellcheck >/dev/null || echo "lint-workflows: no shellcheck on PATH: run: scripts NOT checked" >&2
cd "$here/../.."
"$actionlint" .github/workflows/*.yml
echo "lint-workflows: .github/workflows/*.yml pass $("$actionlint" -version | head -1)"
