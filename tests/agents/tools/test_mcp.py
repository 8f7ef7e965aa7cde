"""Tools from real MCP servers (the test server, over stdio and streamable HTTP)."""

from collections.abc import Iterator

import anyio
import pytest
from mcp_types import CallToolResult, ImageContent, TextContent

from agenthost.agents import ChatAgent, ToolError
from agenthost.agents.models import ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import ToolOptions
from agenthost.agents.tools.mcp import (
    HTTPServer,
    MCPConnection,
    MCPServerError,
    MCPServers,
    MCPToolset,
    result_text,
)
from tests.agents.tools.mcp_servers import STDIO, HTTPServerProcess
from tests.upstream import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def http_server() -> Iterator[HTTPServerProcess]:
    server = HTTPServerProcess()
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_stdio_tools_are_listed_and_called_by_an_agent() -> None:
    connection = MCPConnection("test", STDIO)
    toolset = MCPToolset(connection)
    model = ScriptedModel(
        [
            [call("add", '{"a": 2, "b": 40}'), call("refuse", '{"reason": "no way"}')],
            call("add", '{"a": "two"}'),
            "done",
        ]
    )
    agent = ChatAgent("a", model, toolsets=[toolset])
    async with MCPServers([connection]).lifespan(), agent.lifespan():
        assert connection.health == "up"
        assert [t.name for t in toolset.tools()] == ["add", "shout", "refuse", "crash"]
        add = toolset.tools()[0]
        assert add.definition.parameters["required"] == ["a", "b"]
        assert add.description == "Add two integers."
        result = await agent.run("go")
    assert result.output == "done"
    first, second = model.requests[1].messages[-1].parts, model.requests[2].messages[-1].parts
    assert [(p.content, p.is_error) for p in first] == [  # type: ignore[union-attr]
        ("42", False),
        ("Error executing tool refuse: refused: no way", True),
    ]
    # Invalid input is refused before the call, naming the field.
    assert second[0].content == (  # type: ignore[union-attr]
        "invalid arguments for add: a: 'two' is not of type 'integer'; b: required"
    )
    # The server's input schema reaches the model as it is.
    assert model.requests[0].tools[0].parameters == connection.listed["add"].input_schema


async def test_http_subset_with_a_prefix_and_headers() -> None:
    guarded = HTTPServerProcess(token="s3cret")
    guarded.start()
    try:
        connection = MCPConnection("remote", guarded.server)
        toolset = MCPToolset(connection, include=["shout"], prefix="remote_")
        async with MCPServers([connection]).lifespan():
            (shout,) = toolset.tools()
            assert shout.name == "remote_shout"
            assert await shout.run('{"text": "hi"}') == "HI"
        wrong = MCPConnection("remote", HTTPServer(guarded.url, {"Authorization": "Bearer no"}))
        with pytest.raises(MCPServerError, match=r"MCP server 'remote' .*\(HTTP 401\)"):
            async with MCPServers([wrong]).lifespan():
                pass
    finally:
        guarded.stop()


def test_results_as_text() -> None:
    text = CallToolResult(
        content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")]
    )
    assert result_text(text) == "a\nb"
    structured = CallToolResult(content=[], structured_content={"n": 1})
    assert result_text(structured) == '{"n":1}'
    image = CallToolResult(content=[ImageContent(type="image", data="AA==", mime_type="image/png")])
    assert result_text(image) == "[image content]"
    assert result_text(CallToolResult(content=[])) == ""


async def test_a_named_tool_the_server_lacks_stops_start_up(
    http_server: HTTPServerProcess,
) -> None:
    connection = MCPConnection("remote", http_server.server, optional=True)
    MCPToolset(connection, include=["nope"])
    with pytest.raises(MCPServerError, match=r"MCP server 'remote' .*no tool 'nope'"):
        async with MCPServers([connection]).lifespan():
            pass


async def test_a_server_down_at_start_up_fails_it_unless_optional() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    required = MCPConnection("gone", HTTPServer(url), connect_timeout=5)
    with pytest.raises(MCPServerError, match=rf"MCP server 'gone' \({url}\): "):
        async with MCPServers([required]).lifespan():
            pass
    assert HTTPServer("https://u:pw@h.example:8443/mcp?key=k").describe() == (
        "https://h.example:8443/mcp"
    )
    optional = MCPConnection("gone", HTTPServer(url), optional=True, connect_timeout=5)
    toolset = MCPToolset(optional)
    servers = MCPServers([optional])
    async with servers.lifespan():
        assert servers.health()["gone"].startswith("down: ")
        assert toolset.tools() == ()


async def test_a_stdio_server_that_dies_gives_a_tool_error_then_is_reconnected() -> None:
    connection = MCPConnection("test", STDIO)
    toolset = MCPToolset(connection, options=ToolOptions())
    async with MCPServers([connection]).lifespan():
        tools = {t.name: t for t in toolset.tools()}
        with pytest.raises(ToolError, match="MCP server 'test' closed the connection"):
            await tools["crash"].run("{}")
        assert connection.health.startswith("down")
        assert await tools["add"].run('{"a": 1, "b": 2}') == "3"
        assert connection.health == "up"


async def test_an_http_server_that_dies_and_comes_back(http_server: HTTPServerProcess) -> None:
    connection = MCPConnection("remote", http_server.server, connect_timeout=5)
    toolset = MCPToolset(connection)
    async with MCPServers([connection]).lifespan():
        add = next(t for t in toolset.tools() if t.name == "add")
        assert await add.run('{"a": 1, "b": 1}') == "2"
        http_server.stop()
        with pytest.raises(ToolError, match="MCP server 'remote'"):
            await add.run('{"a": 1, "b": 2}')
        http_server.start()
        assert await add.run('{"a": 1, "b": 3}') == "4"


async def test_an_optional_server_that_comes_up_later_gets_its_tools() -> None:
    late = HTTPServerProcess()
    connection = MCPConnection("late", late.server, optional=True, retry_interval=0.2)
    toolset = MCPToolset(connection, include=["shout"])
    async with MCPServers([connection]).lifespan():
        assert connection.health.startswith("down: ") and toolset.tools() == ()
        late.start()
        try:
            for _ in range(400):  # the background retry, every 0.2 s
                if connection.health == "up":
                    break
                await anyio.sleep(0.05)
            (shout,) = toolset.tools()
            assert await shout.run('{"text": "back"}') == "BACK"
        finally:
            late.stop()
