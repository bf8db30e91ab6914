# listing-agent as a container (a sidecar next to a bot, or on its own).
#
#   docker build -t listing-agent .
#   docker run -d --name listing-agent \
#     -e LISTING_AGENT_SERVICE_TOKEN=... \
#     -v listing-agent-state:/var/lib/listing-agent \
#     -p 127.0.0.1:9464:9464 listing-agent
#
# Config: environment variables (LISTING_AGENT_<PATH>), or a mounted file:
#   -v ./config.json:/etc/listing-agent/config.json:ro -e LISTING_AGENT_CONFIG=/etc/listing-agent/config.json

# ---- build: all dependencies, compile TypeScript to dist/ ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
# Dependencies first, so this layer is reused while only the sources change. `--ignore-scripts`
# skips `prepare` (the build), which needs the sources copied below.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build's second step (dist/cjs/, for CommonJS bots; the daemon does not use it).
COPY scripts/build-cjs.mjs ./scripts/
RUN npm run build

# ---- runtime: production dependencies and dist/ only, as the non-root `node` user ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# `--ignore-scripts`: no `prepare` build here (TypeScript is a devDependency); dist/ comes from
# the build stage. No production dependency needs an install script.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The status page's script and style (served from here, beside uPlot from node_modules).
COPY assets/status ./assets/status

# State lives in a volume owned by `node` (created before VOLUME so a new named volume inherits
# the ownership). /etc/listing-agent is where a config file is mounted.
RUN mkdir -p /var/lib/listing-agent /etc/listing-agent \
 && chown node:node /var/lib/listing-agent \
 && chmod 0700 /var/lib/listing-agent
VOLUME /var/lib/listing-agent

# Idle memory (BENCHMARKS.md, "Footprint"): glibc gives blocks over 128 KiB their own mapping,
# returned when freed, instead of a thread arena that can keep memory freed at start-up for good;
# with the young generation capped at 2 MiB semi-spaces in ENTRYPOINT, the start-up peak is lower
# and the idle daemon smaller, at no measurable cost per delivery. The daemon itself sets no V8
# flag and forces no collection: these two settings are the whole of its memory tuning.
ENV MALLOC_MMAP_THRESHOLD_=131072

ENV LISTING_AGENT_STATE_DIRECTORY=/var/lib/listing-agent \
    LISTING_AGENT_HEALTH_LISTEN=0.0.0.0:9464 \
    LISTING_AGENT_LOG_FORMAT=json

USER node
EXPOSE 9464

# /healthz answers 200 while the process is alive. Slim images have no curl: the probe is node's
# fetch, in dist/cli/healthcheck.js, which asks where LISTING_AGENT_HEALTH_LISTEN says (0.0.0.0 on
# 127.0.0.1, :: on ::1): a port moved with `-e LISTING_AGENT_HEALTH_LISTEN=0.0.0.0:9000` moves it too.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "/app/dist/cli/healthcheck.js"]

# node is PID 1 and handles SIGTERM itself: a graceful stop within 10 s (give it 15 s:
# `docker stop -t 15`, compose's stop_grace_period).
STOPSIGNAL SIGTERM
# --max-semi-space-size=2 (MiB): V8's young generation may grow to 16 MiB semi-spaces during
# start-up and keep them while idle (+14 MiB); see ENV MALLOC_MMAP_THRESHOLD_ above.
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]
CMD ["run"]
