#!/usr/bin/env bash
# Runs a command on the pinned Node.js 24 (tools/ensure-node.sh): puts its bin folder first on
# PATH, so that the command and everything it starts (npx, vitest and its workers, the plugin,
# the controller, agent and proxy processes) run on it, whatever Node the machine has. Prints the
# version first, installs node_modules when they are missing or stale, then runs the command.
#
#   tools/with-node.sh node --import tsx e2e/fleet/up.ts      (npm run up)
#   SIMLOCK_NODE_LINE=22 tools/with-node.sh npx vitest run --project unit
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node_bin=$("$here/ensure-node.sh" "${SIMLOCK_NODE_LINE:-24}")
export PATH="$node_bin:$PATH"
node -e 'console.log(`node ${process.version} (${process.execPath})`)'
"$here/ensure-deps.sh"
exec "$@"
