#!/usr/bin/env bash
# Installs node_modules with `npm ci` when it is missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."
marker=node_modules/.package-lock.json
if [ ! -f "$marker" ] || [ package-lock.json -nt "$marker" ]; then
  echo "installing dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
