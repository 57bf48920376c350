# Kassa's image: the compiled server (npm run build) on Node.js 20, with production dependencies only.
#   podman build -t kassa .        (or docker build)
#   compose.yaml runs it beside PostgreSQL and Redis; docs/operators.md says what it needs.
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim

# The builder installs every dependency, generates the Prisma client and compiles src/ to dist/.
FROM ${NODE_IMAGE} AS builder
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the project's own (prisma generate) runs below, once the schema is here, and
# no dependency's is needed to build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY prisma ./prisma
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js ./scripts/build.js
COPY src ./src
RUN npm run generate && npm run build

# The runtime holds production dependencies, the compiled server and the migrations it applies at start.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY prisma ./prisma
COPY --from=builder /app/dist ./dist
# The embedded databases (used when DATABASE_URL is unset) live in /data, owned by the unprivileged user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/cli.js", "serve"]
