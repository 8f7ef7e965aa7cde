# The README's commands. `make serve` serves config/agents.yaml; `make check`
# runs lint, the type checker and the tests. Both install what they need.
PYTHON ?= python3
UV_VERSION := 0.13.8
UV := .tools/bin/uv
RUN := $(UV) run --frozen --all-extras
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve check lint types test bench schema conformance-a2a

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet uv==$(UV_VERSION)

install: $(UV)
	$(UV) sync --frozen --all-extras

serve: install
	$(RUN) agenthost serve --host $(HOST) --port $(PORT)

check: install lint types test

lint:
	$(RUN) ruff format --check .
	$(RUN) ruff check .
	$(RUN) hadolint Dockerfile

types:
	$(RUN) mypy

test:
	$(RUN) pytest --cov --cov-report=term:skip-covered

bench: install
	$(RUN) python bench/openai_overhead.py
	$(RUN) python bench/local_model.py

schema: install
	$(RUN) agenthost schema > config/agents.schema.json

# The A2A TCK against `agenthost serve`: make conformance-a2a TCK=/path/to/a2a-tck
conformance-a2a: install
	tests/conformance/run_tck.sh $(TCK)
