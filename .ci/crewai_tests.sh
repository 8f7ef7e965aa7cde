#!/usr/bin/env bash
# CrewAI's tests, in an environment of their own: CrewAI pins openai<3 and
# mcp<2, which agenthost's `openai` and `mcp` extras (and so `uv sync
# --all-extras`) cannot hold. A throwaway venv gets agenthost (editable, with
# the a2a extra its served test uses), CrewAI and the test tools, unlocked;
# then the two CrewAI test modules run. Measured on the shared 2-core machine
# under load: install ~25 s (warm uv cache), tests ~130 s.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
venv=$(mktemp -d /tmp/agenthost-crewai-XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$UV" venv -q "$venv" --python 3.11
"$UV" pip install -q --python "$venv/bin/python" -e '.[a2a]' 'crewai>=1.15,<2' \
    pytest anyio asgi-lifespan httpx
# CrewAI leaves its model client's socket to the garbage collector: the
# warning it raises at exit is not one of ours.
CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true \
    "$venv/bin/python" -P -m pytest -q -p no:cacheprovider \
    -W "ignore::pytest.PytestUnraisableExceptionWarning" \
    tests/agents/test_crewai.py tests/app/test_framework_crewai.py
