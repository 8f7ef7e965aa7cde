"""Tools in the config file: every form, every bad form, the examples."""

import sys
from pathlib import Path

import pytest

from agenthost.agents import ClientTool
from agenthost.agents.tools import BaseTool, CacheOptions, ToolOptions
from agenthost.agents.tools.http import HTTPGetTool
from agenthost.agents.tools.mcp import MCPToolset
from agenthost.app.build import build_registry, load_agents
from agenthost.app.cli import main
from agenthost.app.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.yaml"))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    return path


SAMPLE_TOOLS = '''
from agenthost.agents import tool


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool(name="whisper")
def quiet(text: str) -> str:
    """Lower-case a text."""
    return text.lower()


def undocumented(x: int) -> int:
    return x


NOT_CALLABLE = 3
'''


def test_every_tool_form_builds(tmp_path: Path) -> None:
    (tmp_path / "sample_tools_ok.py").write_text(SAMPLE_TOOLS)
    path = write(
        tmp_path,
        f"""
mcp_servers:
  local:
    command: {sys.executable}
    args: [-m, tests.agents.tools.mcp_server, stdio]
    env: {{TOKEN: "${{TOKEN}}"}}
    cwd: ..
  remote:
    url: http://127.0.0.1:9/mcp
    headers: {{Authorization: "Bearer ${{TOKEN}}"}}
    optional: true
    connect_timeout: 5
agents:
  - name: a
    model: echo
    tools:
      - think
      - sample_tools_ok:shout
      - sample_tools_ok:quiet
      - {{tool: calculator, retries: 2, backoff: 0, timeout: 3, cache: true}}
      - {{tool: current_time, cache: {{max_entries: 5, ttl: 9}}}}
      - {{tool: http_get, allowed_hosts: [example.com, "*.example.org"], max_bytes: 10}}
      - ask_user
      - mcp: local
      - {{mcp: remote, tools: [add], prefix: r_, retries: 1}}
""",
    )
    config = load_config(path, environ={"TOKEN": "s3cret"})
    assert "s3cret" not in repr(config)
    registry = build_registry(config, base_dir=tmp_path)
    agent = registry["a"]
    tools = {t.name: t for t in agent.options.tools or ()}  # type: ignore[attr-defined]
    assert list(tools) == [
        "think",
        "shout",
        "whisper",
        "calculator",
        "current_time",
        "http_get",
        "ask_user",
    ]
    assert isinstance(tools["ask_user"], ClientTool)
    calculator = tools["calculator"]
    assert isinstance(calculator, BaseTool)
    assert calculator.options == ToolOptions(retries=2, backoff=0, timeout=3, cache=CacheOptions())
    current_time = tools["current_time"]
    assert isinstance(current_time, BaseTool)
    assert current_time.options.cache == CacheOptions(max_entries=5, ttl=9)
    http_get = tools["http_get"]
    assert isinstance(http_get, HTTPGetTool) and http_get.max_bytes == 10
    local, remote = agent.toolsets  # type: ignore[attr-defined]
    assert isinstance(local, MCPToolset) and local.include is None
    assert isinstance(remote, MCPToolset) and remote.prefix == "r_"
    assert remote.options is not None and remote.options.retries == 1
    (servers,) = registry.resources
    assert servers.health() == {"local": "starting", "remote": "starting"}
    stdio = local.connection.server
    assert stdio.env == {"TOKEN": "s3cret"} and stdio.cwd == str(tmp_path.parent.resolve())
    assert remote.connection.server.headers == {"Authorization": "Bearer s3cret"}
    assert remote.connection.optional and not local.connection.optional


AGENT = "agents:\n  - name: a\n    model: echo\n    tools:\n"


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("      - {tool: calculator, retries: -1}", r"tools.0.retries: Input should be greater"),
        ("      - {tool: calculator, cache: {ttl: 0}}", r"tools.0.cache.ttl: Input should be"),
        ("      - {tool: calculator, colour: red}", r"tools.0.colour: Extra inputs are not"),
        ("      - {tool: 'rm -rf'}", r"tools.0.tool: String should match pattern"),
        ("      - 'not a name'", r"tools.0: String should match pattern"),
        ("      - {tool: http_get}", r"tools.0.allowed_hosts: Field required"),
        ("      - {tool: http_get, allowed_hosts: []}", r"tools.0.allowed_hosts: List should"),
        ("      - {mcp: s, tools: []}", r"tools.0.tools: List should have at least 1"),
        ("      - {mcp: s, prefix: 'a b'}", r"tools.0.prefix: String should match"),
        ("      - http_get", r"tools.0: http_get needs allowed hosts"),
        ("      - shell", r"tools.0: unknown tool 'shell'"),
        ("      - sample_tools_bad:missing", r"tools.0: cannot import 'sample_tools_bad:missing'"),
        ("      - no_such_module:fn", r"tools.0: cannot import 'no_such_module:fn': No module"),
        (
            "      - sample_tools_bad:undocumented",
            r"tools.0: 'sample_tools_bad:undocumented': tool undocumented: the function has no",
        ),
        ("      - sample_tools_bad:NOT_CALLABLE", r"tools.0: .* is neither a function nor a tool"),
        ("      - {tool: ask_user, retries: 1}", r"tools.0: ask_user is answered by the client"),
        (
            "      - {tool: http_get, allowed_hosts: ['http://x/']}",
            r"tools.0.allowed_hosts: not a host name",
        ),
        ("      - {mcp: nowhere}", r"tools.0.mcp: unknown MCP server 'nowhere'; mcp_servers: s"),
        ("      - calculator\n      - {tool: calculator}", r"tools: two tools are named 'calc"),
        (
            "      - sample_tools_bad:shout\n      - {mcp: s, tools: [hout], prefix: s}",
            r"tools: two tools are named 'shout'",
        ),
    ],
)
def test_bad_tools_stop_start_up_naming_file_agent_and_field(
    tmp_path: Path, tools: str, message: str
) -> None:
    (tmp_path / "sample_tools_bad.py").write_text(SAMPLE_TOOLS)
    servers = "mcp_servers:\n  s: {command: mcp-server}\n"
    path = write(tmp_path, servers + AGENT + tools + "\n")
    with pytest.raises(ConfigError, match=message) as caught:
        load_agents(path)
    assert str(caught.value).startswith(f"{path}: agent 'a': tools")


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ("  s: {command: x, url: 'http://h/'}", r"mcp_servers.s.command: Extra inputs"),
        ("  s: {url: 'ftp://h/'}", r"mcp_servers.s.url: String should match pattern"),
        ("  s: {command: ''}", r"mcp_servers.s.command: String should have at least 1"),
        ("  s: {command: x, optional: maybe}", r"mcp_servers.s.optional: Input should be"),
        ("  'bad name': {command: x}", r"mcp_servers.bad name.\[key\]: String should match"),
    ],
)
def test_bad_mcp_servers_are_named(tmp_path: Path, servers: str, message: str) -> None:
    path = write(tmp_path, f"mcp_servers:\n{servers}\n{AGENT}      - think\n")
    with pytest.raises(ConfigError, match=message):
        load_agents(path)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_agenthost_check_accepts_every_example(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if example.name == "crewai.yaml":  # CrewAI lives in an environment of its own (openai<3, mcp<2)
        pytest.importorskip("crewai")
    # As its user runs it: an example on api.openai.com is refused without a key
    # (tests/app/test_example_configs.py checks that refusal).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-example")
    assert main(["check", "--config", str(example)]) == 0
    assert f"{example}: " in capsys.readouterr().out


def test_there_is_an_example_for_each_kind_of_tool() -> None:
    assert {p.name for p in EXAMPLES} >= {
        "python-tools.yaml",
        "mcp-stdio.yaml",
        "mcp-http.yaml",
        "http-get.yaml",
    }
