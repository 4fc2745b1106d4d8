#!/usr/bin/env bash
# npm run release: the files of one release in .simlock/release/<version>/ (tools/release/main.ts says
# which and takes its flags), built on the pinned Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."
exec tools/with-node.sh node --import tsx tools/release/main.ts "$@"
