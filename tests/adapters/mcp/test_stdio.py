"""``agenthost mcp-stdio``: spawned by the SDK's stdio client, and read raw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.adapters.mcp.helpers import INITIALIZE

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """\
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
  - name: noisy
    description: Prints to stdout, answers in capitals.
    import: tests.adapters.mcp.noisy_agents:noisy
  - name: web-only
    model: echo
    expose: [openai]
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(CONFIG)
    return path


def command(config: Path) -> list[str]:
    return [sys.executable, "-P", "-m", "agenthost.app", "mcp-stdio", "--config", str(config)]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdks_stdio_client_lists_and_calls_the_tools(config: Path, mode: str) -> None:
    program, *args = command(config)
    # The SDK passes a bare environment; the test agents need the PYTHONPATH (tests/conftest.py).
    params = StdioServerParameters(
        command=program, args=args, cwd=str(Path.cwd()), env=dict(os.environ)
    )
    async with Client(params, mode=mode) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert tools == ["echo", "noisy"]  # web-only is not exposed to MCP
        result = await client.call_tool("noisy", {"message": "quiet please", "session_id": "s"})
        assert result.structured_content == {
            "text": "QUIET PLEASE",
            "status": "completed",
            "session_id": "s",
        }


def test_stdout_carries_nothing_but_json_rpc(config: Path) -> None:
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "noisy", "arguments": {"message": "hi"}},
        },
    ]
    with subprocess.Popen(
        command(config),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin and process.stdout and process.stderr
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        lines = [process.stdout.readline() for _ in range(3)]
        process.stdin.close()  # end of input: the server exits
        rest, stderr = process.stdout.read(), process.stderr.read()
        process.wait(timeout=30)
    assert process.returncode == 0 and rest == ""
    answers = [json.loads(line) for line in lines]  # every line is a JSON message
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[2]["result"]["structuredContent"]["text"] == "HI"
    # The agent's print and the logs went to stderr.
    assert "this print must not reach the MCP client" in stderr
    assert "serving 2 agents over MCP stdio: echo, noisy" in stderr
