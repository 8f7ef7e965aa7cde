#!/usr/bin/env bash
# IBM Agent Stack's client side (agentstack-sdk) against agenthost: the SDK pins
# a2a-sdk==0.3.24, which agenthost's lock cannot hold, so it gets a throwaway
# venv of its own, pinned by .ci/agent_stack_sdk.lock (`uv pip compile
# --generate-hashes` of 'agentstack-sdk>=0.7.1,<0.8' and 'mcp<2': the SDK
# imports an mcp API that mcp 2 removed; recompile to move it), and the test, in
# agenthost's environment, runs the SDK's client with that venv's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
venv=$(mktemp -d /tmp/agenthost-agentstack-XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$UV" venv -q "$venv" --python 3.11
"$UV" pip sync -q --python "$venv/bin/python" --require-hashes .ci/agent_stack_sdk.lock
AGENTHOST_AGENT_STACK_PYTHON="$venv/bin/python" AGENTHOST_REQUIRE_AGENT_STACK=1 \
    "$UV" run --frozen --all-extras pytest -q -p no:cacheprovider \
    tests/adapters/a2a/test_agent_stack_sdk.py
