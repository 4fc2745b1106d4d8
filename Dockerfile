# One image for the simlock processes; the first argument chooses which:
#   docker run IMAGE controller --namespace simlock-system
#   docker run IMAGE proxy --listen 0.0.0.0:8443
#   docker run IMAGE console --mode token --host 0.0.0.0 --port 8080
#   docker run --init IMAGE agent --config /etc/simlock/agent.yaml   (--init: it spawns tools)
# The TypeScript runs through tsx, which package.json lists under dependencies: `npm ci --omit=dev`
# keeps it (and leaves out vitest, eslint and typescript), so there is no compile step and the
# image holds the sources as they are in the repository.
#
#   docker build -t simlock:0.1.0 .
#
# Plain Dockerfile syntax, so that the legacy builder builds it as well as BuildKit does. The kind
# tier of the tests builds it on machines with no registry, from a Node 24 base made there:
#   docker build --build-arg NODE_IMAGE=<that base> -t simlock:0.1.0 .

ARG NODE_IMAGE=node:24-slim

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
# Mode 0755 in the repository, which COPY keeps.
COPY deploy/image/simlock /usr/local/bin/simlock
# Numeric, so that Kubernetes can check runAsNonRoot against the image (uid 1000 is `node`).
USER 1000:1000
ENTRYPOINT ["/usr/local/bin/simlock"]
