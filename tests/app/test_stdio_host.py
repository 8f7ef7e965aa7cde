"""The stdio commands run on the same host as ``serve``: MCP-server tools and run limits.

An agent whose model (a real HTTP fake upstream) calls a tool of an MCP
server (a real subprocess) answers over ``mcp-stdio`` and ``acp-stdio``
with the tool's result, and the server's ``AGENTHOST_MAX_OUTPUT_CHARS``
stops it there as it does over HTTP.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, Implementation
from mcp import Client, StdioServerParameters

from tests.adapters.acp_zed.test_stdio import Recorder
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PROMPT = 'use shout with {"text": "over stdio"}'
ANSWER = "The result is OVER STDIO."


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serve_in_thread(FakeUpstream().app) as url:
        yield url


@pytest.fixture(scope="module")
def config(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stdio-host") / "agents.yaml"
    path.write_text(
        f"""\
mcp_servers:
  local:
    command: {sys.executable}
    args: [-m, tests.agents.tools.mcp_server, stdio]
    cwd: {ROOT}
agents:
  - name: shouter
    description: Shouts through an MCP server's tool.
    model: openai:any
    model_settings: {{base_url: "{upstream}/v1", api_key: test}}
    tools:
      - {{mcp: local, tools: [shout]}}
"""
    )
    return path


def environment(**settings: str) -> dict[str, str]:
    return {**os.environ, **{f"AGENTHOST_{k.upper()}": v for k, v in settings.items()}}


async def call_over_mcp_stdio(config: Path, env: dict[str, str]) -> tuple[bool, str]:
    args = ["-P", "-m", "agenthost.app", "mcp-stdio", "--config", str(config)]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)
    async with Client(params) as client:
        result = await client.call_tool("shouter", {"message": PROMPT})
    text = "".join(getattr(block, "text", "") for block in result.content)
    return result.is_error, text


async def prompt_over_acp_stdio(config: Path, env: dict[str, str]) -> tuple[str, str]:
    recorder = Recorder()
    args = ["-P", "-m", "agenthost.app", "acp-stdio", "shouter", "--config", str(config)]
    async with spawn_agent_process(
        recorder,  # type: ignore[arg-type]
        sys.executable,
        *args,
        cwd=ROOT,
        env=env,
    ) as (conn, _):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="tests", version="1"),
        )
        session = (await conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id
        try:
            done = await conn.prompt(session_id=session, prompt=[text_block(PROMPT)])
        except RequestError as exc:  # the run's error, as the protocol reports it
            return "error", str(exc.data)
    return done.stop_reason, recorder.text(session).strip()


async def test_mcp_stdio_serves_an_agent_with_mcp_server_tools(config: Path) -> None:
    assert await call_over_mcp_stdio(config, environment()) == (False, ANSWER)


async def test_mcp_stdio_applies_the_servers_run_limits(config: Path) -> None:
    failed, text = await call_over_mcp_stdio(config, environment(max_output_chars="10"))
    assert failed and "beyond 10 characters" in text


async def test_acp_stdio_serves_an_agent_with_mcp_server_tools(config: Path) -> None:
    assert await prompt_over_acp_stdio(config, environment()) == ("end_turn", ANSWER)


async def test_acp_stdio_applies_the_servers_run_limits(config: Path) -> None:
    reason, text = await prompt_over_acp_stdio(config, environment(max_output_chars="10"))
    assert reason != "end_turn" and "beyond 10 characters" in text, (reason, text)
