# One image for the simlock processes; the first argument chooses which:
#   docker run IMAGE controller --namespace simlock-system
#   docker run IMAGE proxy --listen 0.0.0.0:8443
#   docker run IMAGE console --mode token --host 0.0.0.0 --port 8080
#   docker run --init IMAGE agent --config /etc/simlock/agent.yaml   (--init: it spawns tools)
# Each process runs from its bundle (bin/bundle.mjs: its main.ts, our code and its npm
# dependencies in a few files, made by esbuild), so the image holds no node_modules and a process
# starts without compiling TypeScript (docs/adr/0009-bundled-entry-points.md).
#
#   docker build -t simlock:0.1.0 .
#
# Plain Dockerfile syntax, so that the legacy builder builds it as well as BuildKit does. The kind
# tier of the tests builds it on machines with no registry, from a Node 24 base made there:
#   docker build --build-arg NODE_IMAGE=<that base> -t simlock:0.1.0 .

ARG NODE_IMAGE=node:24-slim

# The bundles, and the console's web page built by Vite with the sources hash the console checks.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# No dependency needs an install script; not running any keeps the build reproducible.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY api ./api
COPY runtime ./runtime
COPY controller ./controller
COPY proxy ./proxy
COPY agent ./agent
COPY console ./console
COPY bin/bundle.mjs ./bin/bundle.mjs
RUN node bin/bundle.mjs --out dist/bundle --only controller,proxy,agent,console \
 && node --import tsx -e "import('./console/index.ts').then((m) => m.ensureConsoleBuilt(console.log))"

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=build /app/dist/bundle ./dist/bundle
# The console serves its page from console/web/dist and checks it against the sources it was built
# from (console/web, console/model, api), so those come too; .dockerignore keeps tests out.
COPY api ./api
COPY console/model ./console/model
COPY console/web ./console/web
COPY --from=build /app/console/web/dist ./console/web/dist
# Mode 0755 in the repository, which COPY keeps.
COPY deploy/image/simlock /usr/local/bin/simlock
# Numeric, so that Kubernetes can check runAsNonRoot against the image (uid 1000 is `node`).
USER 1000:1000
ENTRYPOINT ["/usr/local/bin/simlock"]
