"""Agents as MCP tools, through the official MCP client, in both protocol eras."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, TextContent, TextResourceContents

from agenthost.agents import Agent, ChatAgent, FunctionAgent, Message, ModelError
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from tests.adapters.mcp.helpers import URL, http, mcp_client, mcp_settings, running_app
from tests.principals import transcript_model

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "2026-07-28"]


def failing_model() -> FunctionModel:
    def fail(request: ModelRequest) -> str:
        raise ModelError("upstream answered 500")

    return FunctionModel(fail, name="failing")


def agents() -> dict[str, Agent]:
    return {
        "echo": ChatAgent("echo", EchoModel(), description="Repeats what you say."),
        "memory": ChatAgent("memory", transcript_model()),
        "broken": ChatAgent("broken", failing_model()),
    }


def crash(messages: list[Message]) -> str:
    raise KeyError("internal detail")


@pytest.mark.parametrize("mode", ERAS)
async def test_every_agent_is_a_tool_with_the_message_and_session_schema(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == ["echo", "memory", "broken"]
        echo = tools["echo"]
        assert echo.description == "Repeats what you say."
        schema = echo.input_schema
        assert "required" not in schema  # no message: an empty turn
        assert set(schema["properties"]) == {"message", "session_id"}
        assert schema["additionalProperties"] is False
        assert echo.output_schema is not None
        assert echo.output_schema["required"] == ["text", "status", "session_id"]
        hints = echo.annotations
        assert hints is not None
        assert hints.read_only_hint is False and hints.idempotent_hint is False


@pytest.mark.parametrize("mode", ERAS)
async def test_a_call_answers_with_the_agent_text_and_the_session_id(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        result = await client.call_tool("echo", {"message": "hello there"})
        assert not result.is_error
        assert result.content == [TextContent(type="text", text="hello there")]
        assert result.structured_content == {
            "text": "hello there",
            "status": "completed",
            "session_id": None,
        }
        named = await client.call_tool("echo", {"message": "hi", "session_id": "s-1"})
        assert named.structured_content is not None
        assert named.structured_content["session_id"] == "s-1"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_session_id_continues_the_conversation_and_none_starts_afresh(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:

        async def say(text: str, **session: str) -> str:
            result = await client.call_tool("memory", {"message": text, **session})
            first = result.content[0]
            assert isinstance(first, TextContent)
            return first.text

        assert await say("my name is Ada", session_id="a") == "my name is Ada"
        # The model is shown the whole transcript: the earlier turn is in it.
        assert (
            await say("who am I?", session_id="a") == "my name is Ada | my name is Ada | who am I?"
        )
        assert await say("who am I?") == "who am I?"
        assert await say("who am I?", session_id="b") == "who am I?"

    # A new client (a new MCP session, or none) continues the same conversation.
    async with running_app(agents()) as app:
        async with mcp_client(app, mode=mode) as client:
            await client.call_tool("memory", {"message": "one", "session_id": "x"})
        async with mcp_client(app, mode="legacy") as other:
            result = await other.call_tool("memory", {"message": "two", "session_id": "x"})
            assert result.structured_content is not None
            assert result.structured_content["text"] == "one | one | two"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_failing_agent_is_an_error_result_not_a_protocol_error(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        result = await client.call_tool("broken", {"message": "hi"})
        assert result.is_error
        first = result.content[0]
        assert isinstance(first, TextContent)
        assert first.text == "the agent's model failed: upstream answered 500"
        # The server goes on serving.
        assert not (await client.call_tool("echo", {"message": "still here"})).is_error


async def test_a_crashing_agent_is_an_error_result_that_keeps_its_secrets() -> None:
    async with (
        running_app({"crash": FunctionAgent("crash", crash)}) as app,
        mcp_client(app) as client,
    ):
        result = await client.call_tool("crash", {"message": "hi"})
    assert result.is_error
    assert result.content == [
        TextContent(type="text", text="the agent failed with an internal error (KeyError)")
    ]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_tool_is_the_protocols_invalid_params_error(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("nobody", {"message": "hi"})
        assert raised.value.error.code == INVALID_PARAMS
        assert raised.value.error.message == "Unknown tool: nobody"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"message": 3}, "invalid arguments: message: Input should be a valid string"),
        ({"message": "hi", "color": "red"}, "invalid arguments: color: Extra inputs"),
        ({"message": "hi", "session_id": ""}, "invalid arguments: session_id: String should"),
        (
            {"message": "hi", "session_id": "s" * 201},
            "invalid arguments: session_id: String should",
        ),
    ],
)
async def test_invalid_arguments_are_the_protocols_invalid_params_error(
    mode: str, arguments: dict[str, object], message: str
) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.session.call_tool("echo", arguments)
        assert raised.value.error.code == INVALID_PARAMS
        assert raised.value.error.message.startswith(message)


@pytest.mark.parametrize("mode", ERAS)
async def test_each_agent_has_a_resource_and_a_prompt(mode: str) -> None:
    async with running_app(agents()) as app, mcp_client(app, mode=mode) as client:
        resources = (await client.list_resources()).resources
        assert [str(r.uri) for r in resources] == [
            "agent://echo",
            "agent://memory",
            "agent://broken",
        ]
        read = await client.read_resource("agent://echo")
        contents = read.contents[0]
        assert isinstance(contents, TextResourceContents)
        assert json.loads(contents.text) == {
            "name": "echo",
            "description": "Repeats what you say.",
            "model": "echo",
            "tools": [],
            "protocols": ["openai", "mcp"],
        }
        with pytest.raises(MCPError, match="Resource not found: agent://nobody"):
            await client.read_resource("agent://nobody")
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["echo", "memory", "broken"]
        prompt = await client.get_prompt("echo", {"message": "what is MCP?"})
        first = prompt.messages[0].content
        assert isinstance(first, TextContent)
        assert first.text == "Use the tool echo to answer this: what is MCP?"
        with pytest.raises(MCPError, match="missing prompt argument: message"):
            await client.get_prompt("echo", {})


async def test_the_endpoint_answers_at_mcp_without_a_redirect_and_v1_still_works() -> None:
    async with running_app(agents()) as app, http(app) as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"accept": "application/json, text/event-stream"}
        answer = await client.post(URL, json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        assert "location" not in answer.headers
        models = await client.get("http://localhost/v1/models")
        assert [m["id"] for m in models.json()["data"]] == ["echo", "memory", "broken"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example"])
async def test_an_unexpected_host_header_gets_421(host: str) -> None:
    async with running_app(agents()) as app, http(app) as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"accept": "application/json, text/event-stream", "host": host}
        answer = await client.post(URL, json=body, headers=headers)
        assert answer.status_code == 421


async def test_configured_hosts_are_accepted_with_or_without_a_port() -> None:
    settings = mcp_settings(mcp_allowed_hosts=["agents.example.com"])
    async with running_app(agents(), settings) as app:
        for host in ("agents.example.com", "agents.example.com:443", "127.0.0.1:9", "[::1]"):
            async with mcp_client(app, {"host": host}) as client:
                assert (await client.list_tools()).tools[0].name == "echo"


async def test_a_browser_origin_must_be_allowed() -> None:
    settings = mcp_settings(mcp_allowed_origins=["https://app.example.com"])
    async with running_app(agents(), settings) as app, http(app) as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for origin, status in [
            ("https://app.example.com", 200),
            ("http://localhost:5173", 200),
            ("https://evil.example", 403),
        ]:
            headers = {"accept": "application/json, text/event-stream", "origin": origin}
            answer = await client.post(URL, json=body, headers=headers)
            assert answer.status_code == status, origin
