#!/usr/bin/env bash
# Install the JavaScript clients of the README's snippets and the MCP TypeScript SDK
# (tests/clients/package.json: openai-node, the Vercel AI SDK, @modelcontextprotocol/sdk,
# Claude Code, the Anthropic TypeScript SDK and a Node 22 from npm) into .tools/clients, once. tests/adapters/mcp/test_ts_sdk_clients.py
# runs the MCP SDK's client scripts (tests/clients/mcp/*.mjs).
# tests/test_readme.py runs the JavaScript snippets with them; without them it skips
# those (CI installs them: .ci/run).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir="$repo/.tools/clients"
mkdir -p "$dir"
if ! cmp -s "$repo/tests/clients/package.json" "$dir/package.json" || [ ! -d "$dir/node_modules/ai" ]; then
  cp "$repo/tests/clients/package.json" "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel error --no-package-lock
fi
