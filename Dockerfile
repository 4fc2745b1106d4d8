# syntax=docker/dockerfile:1.7
# One image for the simlock processes; the first argument chooses which:
#   docker run IMAGE controller --namespace simlock-system
#   docker run IMAGE proxy --listen 0.0.0.0:8443
#   docker run IMAGE console --mode token --host 0.0.0.0 --port 8080
#   docker run --init IMAGE agent --config /etc/simlock/agent.yaml   (--init: it spawns tools)
# The TypeScript runs through tsx, which package.json lists under dependencies: `npm ci --omit=dev`
# keeps it (and leaves out vitest, eslint and typescript), so there is no compile step and the
# image holds the sources as they are in the repository.
#
# Not built by the project's tests: our machines have no Docker engine. Build it with
#   docker build -t simlock:0.1.0 .
# (BuildKit, the default since Docker 23, for the heredoc and COPY --chmod below.)

ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs an install script; not running any keeps the build reproducible.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# The console's web page, built by Vite (a dev dependency) with the sources hash the console checks.
FROM ${NODE_IMAGE} AS console-web
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY api ./api
COPY runtime ./runtime
COPY console ./console
RUN node --import tsx -e "import('./console/index.ts').then((m) => m.ensureConsoleBuilt(console.log))"

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
# .dockerignore keeps tests and test data out of these.
COPY api ./api
COPY runtime ./runtime
COPY controller ./controller
COPY proxy ./proxy
COPY agent ./agent
COPY console ./console
COPY --from=console-web /app/console/web/dist ./console/web/dist
COPY --chmod=0755 <<'SCRIPT' /usr/local/bin/simlock
#!/bin/sh
# simlock controller|proxy|agent|console [flags]: runs that component's main.ts through tsx.
set -eu
component="${1:-}"
case "$component" in
  controller | proxy | agent | console)
    shift
    # tsx is resolved from /app/node_modules; its compile cache goes to $TMPDIR (the chart mounts
    # an emptyDir at /tmp, as the root filesystem is read-only there).
    cd /app
    exec node --import tsx "/app/$component/main.ts" "$@"
    ;;
  *)
    echo "usage: simlock controller|proxy|agent|console [flags]   (then --help for that component's flags)" >&2
    exit 64
    ;;
esac
SCRIPT
# Numeric, so that Kubernetes can check runAsNonRoot against the image (uid 1000 is `node`).
USER 1000:1000
ENTRYPOINT ["/usr/local/bin/simlock"]
