# One image for every process: pass the entry point as the command, e.g.
#   node services/gateway/dist/main-api.js | node services/identity/dist/main-migrate.js
# CI has no Docker engine: test/operate/dockerfile.test.ts replays these COPY and RUN lines as
# written (honouring .dockerignore) and starts processes from the result, so keep to what it
# replays (COPY without wildcards, RUN without --mount, ENV KEY=value, exec-form CMD).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY shared/package.json shared/
COPY services/identity/package.json services/identity/
COPY services/conversation/package.json services/conversation/
COPY services/notification/package.json services/notification/
COPY services/webhooks/package.json services/webhooks/
COPY services/mail/package.json services/mail/
COPY services/gateway/package.json services/gateway/
COPY console/package.json console/
RUN npm ci --no-audit --no-fund
COPY shared shared
COPY services services
# The console's API types come from the API document: a console the API broke fails here.
COPY docs/openapi.json docs/
COPY console console
RUN npx tsc -b services/identity services/conversation services/notification services/webhooks services/mail services/gateway && npm run build -w @collab/console && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules node_modules
# Workspaces whole: a workspace's own node_modules holds the dependencies whose version differs
# from the hoisted one (shared/node_modules/ioredis), and the processes need them.
COPY --from=build --chown=node:node /app/shared shared
COPY --from=build --chown=node:node /app/services services
COPY --from=build --chown=node:node /app/console/dist console/dist
USER node
CMD ["node", "services/gateway/dist/main-api.js"]
