"""MCP servers in the app's lifespan: tools served through /v1, /readyz, start-up failures."""

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgi_lifespan import LifespanManager

from agenthost.agents import AgentError, ChatAgent
from agenthost.agents.models import ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools.mcp import MCPServerError
from agenthost.app.build import build_registry
from agenthost.app.config import load_config
from agenthost.app.registry import Registry
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from agenthost.app.specs import ChatAgentSpec
from agenthost.app.tool_build import Tooling
from tests.conftest import openai_client, running
from tests.upstream import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def registry(tmp_path: Path, yaml: str, model: ScriptedModel) -> Registry:
    """Agent 'a' of the config, its tools built as in serving, driven by a scripted model."""
    path = tmp_path / "agents.yaml"
    path.write_text(yaml)
    config = load_config(path, environ={})
    tooling = Tooling(config.mcp_servers, tmp_path)
    (spec,) = config.agents
    assert isinstance(spec, ChatAgentSpec)
    tools, toolsets = tooling.build(spec.name, spec.tools)
    built = Registry.with_defaults(plugins=False)
    built.add("a", ChatAgent("a", model, tools=tools, toolsets=toolsets))
    servers = tooling.servers()
    assert servers is not None
    built.resources.append(servers)
    return built


STDIO = f"""
  local:
    command: {sys.executable}
    args: [-m, tests.agents.tools.mcp_server, stdio]
    cwd: {ROOT}
"""


async def test_mcp_tools_are_served_and_an_optional_server_down_is_reported(
    tmp_path: Path,
) -> None:
    down = f"http://127.0.0.1:{free_port()}/mcp"
    model = ScriptedModel([call("local_add", '{"a": 20, "b": 22}'), "The answer is 42."])
    yaml = (
        f"mcp_servers:{STDIO}  gone: {{url: '{down}', optional: true, connect_timeout: 5}}\n"
        "agents:\n  - name: a\n    model: echo\n    tools:\n"
        "      - {mcp: local, prefix: local_, tools: [add, shout]}\n      - mcp: gone\n"
    )
    agents = registry(tmp_path, yaml, model)
    async with running(agents) as (_, http):
        ready = await http.get("/readyz")
        assert ready.status_code == 200
        body = ready.json()
        assert body["status"] == "degraded"
        assert body["mcp_servers"]["local"] == "up"
        assert body["mcp_servers"]["gone"].startswith("down: ")
    async with openai_client(agents) as client:
        reply = await client.chat.completions.create(
            model="a", messages=[{"role": "user", "content": "20 + 22?"}]
        )
    assert reply.choices[0].message.content == "The answer is 42."
    offered = [t.name for t in model.requests[0].tools]
    assert offered == ["local_add", "local_shout"]
    assert model.requests[1].messages[-1].parts[0].content == "42"  # type: ignore[union-attr]


async def test_a_required_server_down_stops_start_up(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/mcp"
    yaml = (
        f"mcp_servers:\n  gone: {{url: '{down}', connect_timeout: 5}}\n"
        "agents:\n  - name: a\n    model: echo\n    tools: [{mcp: gone}]\n"
    )
    app = create_app(Settings(), registry(tmp_path, yaml, ScriptedModel([])))
    with pytest.raises(MCPServerError, match=rf"MCP server 'gone' \({down}\): "):
        async with LifespanManager(app):
            pass


async def test_a_clash_with_a_servers_tool_stops_start_up(tmp_path: Path) -> None:
    yaml = (
        f"mcp_servers:{STDIO}"
        "agents:\n  - name: a\n    model: echo\n    tools: [{mcp: local}, sample:add]\n"
    )
    (tmp_path / "sample.py").write_text(
        "def add(a: int, b: int) -> int:\n    '''Add.'''\n    return a + b\n"
    )
    app = create_app(Settings(), registry(tmp_path, yaml, ScriptedModel([])))
    with pytest.raises(AgentError, match=r"agent 'a': tools: duplicate tool name 'add'"):
        async with LifespanManager(app):
            pass


@pytest.fixture
def example_http_port() -> Iterator[int]:
    """config/examples/example_mcp_server.py over HTTP on a free port."""
    port = free_port()
    script = ROOT / "config" / "examples" / "example_mcp_server.py"
    server = subprocess.Popen([sys.executable, str(script), "http", str(port)])
    try:
        for _ in range(400):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            time.sleep(0.05)
        yield port
    finally:
        server.kill()
        server.wait(timeout=10)


async def test_the_mcp_examples_work(example_http_port: int) -> None:
    """The stdio and HTTP examples connect to the example server and call its tools."""
    examples = ROOT / "config" / "examples"
    environ = {"PYTHON": sys.executable, "MCP_URL": f"http://127.0.0.1:{example_http_port}/mcp"}
    stdio = build_registry(
        load_config(examples / "mcp-stdio.yaml", environ=environ), base_dir=examples
    )
    http = build_registry(
        load_config(examples / "mcp-http.yaml", environ=environ), base_dir=examples
    )
    async with stdio.resources[0].lifespan(), http.resources[0].lifespan():
        counter = stdio["counter"].toolsets[0].tools()  # type: ignore[attr-defined]
        assert [t.name for t in counter] == ["notes_word_count"]
        assert await counter[0].run('{"text": "one two three"}') == "3"
        remote = http["remote-notes"].toolsets[0].tools()  # type: ignore[attr-defined]
        assert sorted(t.name for t in remote) == [
            "remote_add_note",
            "remote_list_notes",
            "remote_word_count",
        ]
        assert http.resources[0].health() == {"remote": "up"}
