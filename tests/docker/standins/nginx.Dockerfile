# Stand-in for nginx:1.27-alpine (README.md): Debian's nginx 1.22, in the foreground.
ARG BASE=python:3.11-slim
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*
EXPOSE 8080
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
