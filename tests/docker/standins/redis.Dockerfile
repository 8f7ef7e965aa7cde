# Stand-in for redis:7-alpine (README.md): Debian's redis-server, data in /data.
ARG BASE=python:3.11-slim
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data
# hadolint ignore=DL3066
USER redis
WORKDIR /data
EXPOSE 6379
# As the official image does: with no config file, protected mode off (the
# network is compose's own), whatever command compose gives.
ENTRYPOINT ["sh", "-c", "if [ \"$1\" = redis-server ]; then exec \"$@\" --protected-mode no; fi; exec \"$@\"", "redis-entrypoint"]
CMD ["redis-server"]
