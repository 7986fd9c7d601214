# One image for the three apps; each compose service / Kubernetes Deployment picks its command.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NX_DAEMON=false NX_NO_CLOUD=true
COPY package.json package-lock.json nx.json tsconfig.base.json tsconfig.json ./
COPY libs libs
COPY apps apps
COPY tools tools
COPY examples examples
# Build everything, then keep only runtime dependencies; the dev launcher, the benchmark, the
# agent contract suite (tools/) and the example agents (examples/) stay out of the image. tools/ci/test/dependencies.spec.ts holds this list honest.
RUN npm ci --no-audit --no-fund \
 && npx nx run-many -t build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf tools examples node_modules/@mcpgw/devstack node_modules/@mcpgw/bench \
   node_modules/@mcpgw/agent-contract node_modules/@mcpgw/example-agent-ts

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=node:node /app /app
USER node
# Default: the gateway. Others: apps/message-service/dist/main.js, apps/agent-pod/dist/main.js,
# the migrations apps/*/dist/migrate.js, the admin CLI apps/gateway/dist/admin/main.js.
CMD ["node", "apps/gateway/dist/main.js"]
