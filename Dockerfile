# syntax=docker/dockerfile:1
#
# Signet's container image: `signet serve` on port 8080 as an unprivileged user, SQLite in the
# /data volume (or PostgreSQL with SIGNET_DATABASE), settings from /etc/signet/signet.yaml and
# SIGNET_… variables. See docs/operations.md ("Containers") and compose.yaml.
#
#     docker build -t signet .
#
# The build and install steps are scripts/container-build, which CI runs without a container
# engine; this file only arranges them. The image build itself is not run in CI.

# ---- Stage 1: build ----------------------------------------------------------------------
# Signet needs Swift 6.2 or later tools (Package.swift: swift-tools-version 6.2).
FROM swift:6.2-bookworm AS build

# A binary built with --static-swift-stdlib still links libcurl dynamically (Foundation's
# URLSession, used by the SDK inside `signet`); the link needs its development files.
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends libcurl4-openssl-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
# The build folder is a cache mount, so rebuilds reuse compiled dependencies; `build` copies
# the binary out of it into /out, laid out as the runtime image's root.
RUN --mount=type=cache,target=/src/.build \
    scripts/container-build build /out

# ---- Stage 2: runtime ----------------------------------------------------------------------
FROM debian:bookworm-slim

# ca-certificates: TLS to PostgreSQL and to the SMS gateway. libcurl4: see above. SQLite is
# compiled into the binary (sqlite-nio), the Swift runtime and Foundation are linked in, and
# glibc, libstdc++ and zlib are already in the base image.
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends ca-certificates libcurl4 \
    && rm -rf /var/lib/apt/lists/*

# The user the server runs as: no login, no home, a fixed uid so volumes and secret files can
# be given to it (chown 10001).
RUN groupadd --system --gid 10001 signet \
    && useradd --system --uid 10001 --gid signet --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin signet

# /usr/local/bin/signet, /usr/local/libexec/signet/container-build, /etc/signet/signet.yaml
# and /data, as `scripts/container-build install` laid them out.
COPY --from=build /out/ /

# COPY from a stage does not keep the folder's owner: give /data to signet here, before
# VOLUME (a new volume starts as a copy of it, owner and mode included).
RUN chown signet:signet /data && chmod 0700 /data
VOLUME /data

# Listen on every interface of the container; keep data in the volume; log JSON lines.
# SIGNET_CONFIG holds the settings every deployment shares; issuer, TLS or trusted proxies,
# database, SMS gateway and secrets come from the environment (see compose.yaml) or a mounted file.
ENV SIGNET_DATA_DIR=/data \
    SIGNET_HOST=0.0.0.0 \
    SIGNET_LOG_FORMAT=json \
    SIGNET_CONFIG=/etc/signet/signet.yaml

# 8080: the provider (plain HTTP: put a TLS-terminating proxy in front, or give TLS files).
# 9090: the admin listener (/metrics, admin API), when SIGNET_ADMIN_HOST=0.0.0.0 makes it
# reachable from outside the container; publish it on the host's loopback only.
EXPOSE 8080 9090

USER signet

# GET /health/ready on the port SIGNET_PORT names (8080 by default), without curl. With TLS
# files inside the container the server speaks https, which this check cannot: override
# HEALTHCHECK then, or end TLS at a proxy.
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
    CMD ["/usr/local/libexec/signet/container-build", "healthcheck"]

# SIGTERM (docker stop) lets requests in flight finish within shutdown.gracePeriod (10 s by
# default); give the container longer than that before SIGKILL (docker stop -t 30,
# stop_grace_period in compose.yaml).
STOPSIGNAL SIGTERM
ENTRYPOINT ["signet"]
CMD ["serve"]
