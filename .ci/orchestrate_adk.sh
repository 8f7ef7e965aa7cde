#!/usr/bin/env bash
# The watsonx Orchestrate ADK's external-agent validator (what `orchestrate
# evaluations validate-external` runs) against agenthost: the ADK's evaluation
# framework pins langchain, pandas and OpenTelemetry <=1.39, which agenthost's
# lock cannot hold, so it gets a throwaway venv of its own, pinned by
# .ci/orchestrate_adk.lock (`uv pip compile --generate-hashes` of
# 'ibm-watsonx-orchestrate[agentops]>=2.19,<3'; recompile to move it), and the
# test, in agenthost's environment, runs the validator with that venv's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
venv=$(mktemp -d /tmp/agenthost-wxo-XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$UV" venv -q "$venv" --python 3.11
"$UV" pip sync -q --python "$venv/bin/python" --require-hashes .ci/orchestrate_adk.lock
AGENTHOST_WXO_PYTHON="$venv/bin/python" AGENTHOST_REQUIRE_WXO=1 \
    "$UV" run --frozen --all-extras pytest -q -p no:cacheprovider \
    tests/adapters/orchestrate/test_adk_validator.py
