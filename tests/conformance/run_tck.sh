#!/usr/bin/env bash
# Run the A2A TCK against `agenthost serve` with the conformance agent.
#
#   tests/conformance/run_tck.sh /path/to/a2a-tck [run_tck.py options...]
#   TCK_AGENT=tck-message tests/conformance/run_tck.sh /path/to/a2a-tck -- -k TestMessageResponse
#
# The TCK checkout (github.com/a2aproject/a2a-tck, branch 1.0-dev) needs its
# own environment: `python3 -m venv .venv && .venv/bin/pip install -e .` in it.
# Serves tests/conformance/agents.yaml on 127.0.0.1 (HTTP port $PORT, gRPC
# port $GRPC_PORT), runs the TCK over every transport the card lists, stops
# the server. Reports land in the TCK checkout's reports/ folder.
set -euo pipefail

tck=${1:?usage: $0 /path/to/a2a-tck [run_tck.py options...]}
shift
tck=$(cd "$tck" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-8765}
grpc_port=${GRPC_PORT:-8766}
python=${TCK_PYTHON:-$tck/.venv/bin/python}
agent=${TCK_AGENT:-tck}  # tck-message: the agent that answers with a direct Message

cd "$repo"
# The config imports tests.conformance.agent: put a folder holding only a `tests`
# link on the path (the repository root would shadow the Agents SDK's `agents`).
path_dir=$(mktemp -d)
ln -s "$repo/tests" "$path_dir/tests"
PYTHONPATH="$path_dir${PYTHONPATH:+:$PYTHONPATH}" \
AGENTHOST_ADAPTERS=a2a \
AGENTHOST_A2A_GRPC_PORT=$grpc_port \
AGENTHOST_A2A_DEFAULT_AGENT=$agent \
AGENTHOST_A2A_PUSH_PRIVATE_NETWORKS=true \
AGENTHOST_ACCESS_LOG=false \
  .venv/bin/agenthost serve --config tests/conformance/agents.yaml --port "$port" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -rf "$path_dir"' EXIT

for _ in $(seq 1 900); do  # up to 3 min: start-up is slow on a loaded machine
  if curl -fs "http://127.0.0.1:$port/readyz" >/dev/null; then break; fi
  sleep 0.2
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null

cd "$tck"
"$python" run_tck.py --sut-host "http://127.0.0.1:$port/a2a/$agent" "$@"
