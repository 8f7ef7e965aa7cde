"""The ``logging`` capability, completions, resource templates, SSE priming, 2026-07-28 errors.

A run's own events (a tool starts, a tool fails, an agent works for it, the
run fails) arrive as ``notifications/message`` at the level the client set:
per MCP session with ``logging/setLevel`` (handshake era), per request with
``_meta`` (2026-07-28).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
)

from agenthost.agents import ChatAgent, ModelError
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import INITIALIZE, mcp_settings
from tests.adapters.mcp.logging_agents import adder, exploder
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio


def broken(request: ModelRequest) -> Reply:
    raise ModelError("upstream answered 500")


AGENTS = {
    "adder": adder(),
    "exploder": exploder(),
    "broken": ChatAgent("broken", FunctionModel(broken)),
}


@pytest.fixture(scope="module")
def urls() -> Any:
    """One stateful and one stateless server for the module."""
    stateful = create_app(mcp_settings(mcp_stateless=False), AGENTS)
    stateless = create_app(mcp_settings(mcp_stateless=True), AGENTS)
    with (
        serve_in_thread(stateful, lifespan=True) as one,
        serve_in_thread(stateless, lifespan=True) as other,
    ):
        yield {"stateful": f"{one}/mcp", "stateless": f"{other}/mcp"}


class Messages:
    def __init__(self) -> None:
        self.received: list[LoggingMessageNotificationParams] = []

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.received.append(params)

    def events(self) -> list[tuple[str, str]]:
        return [(m.level, m.data["event"]) for m in self.received]


# The client SDK marks logging/setLevel deprecated (2026-07-28 dropped it); earlier eras use it.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_set_level_per_session_chooses_which_run_events_arrive(urls: Any) -> None:
    messages = Messages()
    async with Client(urls["stateful"], mode="legacy", logging_callback=messages) as client:
        assert client.server_capabilities.logging is not None
        # Before any setLevel: warnings and worse (a failed tool), not a tool's start.
        await client.call_tool("adder", {"message": "go"})
        assert messages.events() == []
        await client.call_tool("exploder", {"message": "go"})
        assert messages.events() == [("warning", "tool_failed")]
        failed = messages.received[0]
        assert failed.logger == "agenthost.exploder"
        assert failed.data["tool"] == "explode" and "fuse" in failed.data["error"]
        messages.received.clear()

        await client.set_logging_level("info")
        await client.call_tool("adder", {"message": "go"})
        assert messages.events() == [("info", "tool_started")]
        assert messages.received[0].data["tool"] == "add"
        messages.received.clear()

        await client.set_logging_level("error")
        await client.call_tool("exploder", {"message": "go"})
        assert messages.events() == []
        result = await client.call_tool("broken", {"message": "go"})
        assert result.is_error
        assert messages.events() == [("error", "run_failed")]
        assert messages.received[0].data["kind"] == "upstream"
    # Another session starts at the default level again.
    fresh = Messages()
    async with Client(urls["stateful"], mode="legacy", logging_callback=fresh) as client:
        await client.call_tool("adder", {"message": "go"})
    assert fresh.events() == []


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_2026_era_sends_the_levels_each_request_asks_for(urls: Any) -> None:
    messages = Messages()
    options: dict[str, Any] = {"logging_callback": messages, "log_level": "debug"}
    async with Client(urls["stateless"], mode="2026-07-28", **options) as client:
        await client.call_tool("adder", {"message": "go"})
    assert messages.events() == [("info", "tool_started")]
    quiet = Messages()
    async with Client(urls["stateless"], mode="2026-07-28", logging_callback=quiet) as client:
        await client.call_tool("exploder", {"message": "go"})
    assert quiet.events() == []  # no opt-in, no messages


async def test_a_stateless_handshake_request_can_name_its_level_in_meta(urls: Any) -> None:
    # No session keeps a setLevel in stateless mode; the request's _meta can say it.
    messages = Messages()
    async with Client(urls["stateless"], mode="legacy", logging_callback=messages) as client:
        await client.call_tool("adder", {"message": "go"})
        assert messages.events() == []  # the default: warning
        meta = {"io.modelcontextprotocol/logLevel": "info"}
        await client.call_tool("adder", {"message": "go"}, meta=meta)
    assert messages.events() == [("info", "tool_started")]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_resource_templates_are_listed_and_a_missing_resource_is_the_eras_error(
    urls: Any, mode: str
) -> None:
    async with Client(urls["stateless"], mode=mode) as client:
        assert (await client.list_resource_templates()).resource_templates == []
        with pytest.raises(MCPError) as raised:
            await client.read_resource("agent://nobody")
    # SEP-2164 (2026-07-28) made it invalid params; before, the spec's -32002.
    assert raised.value.error.code == (INVALID_PARAMS if mode == "2026-07-28" else -32002)


async def test_an_sse_stream_opens_with_a_priming_event_and_its_retry(urls: Any) -> None:
    """Stateful mode: a dropped stream can be resumed there (the SDK primes no stateless one)."""
    async with httpx.AsyncClient(timeout=30) as client:
        opened = await client.post(
            urls["stateful"],
            json=INITIALIZE,
            headers={"accept": "application/json, text/event-stream"},
        )
    session = opened.headers["mcp-session-id"]
    headers = {
        "accept": "application/json, text/event-stream",
        # Priming events are for 2025-11-25 clients (older ones cannot parse an empty event).
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": session,
    }
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx.AsyncClient(timeout=30, headers=headers) as client:
        listed = await client.post(urls["stateful"], json=listing)
    assert listed.headers["content-type"].startswith("text/event-stream")
    text = listed.text
    first = text.replace("\r\n", "\n").split("\n\n")[0].splitlines()
    fields = dict(line.split(":", 1) for line in first if ":" in line)
    assert fields.keys() >= {"id", "retry"}, first
    assert fields["retry"].strip() == "1000"
    assert fields.get("data", "").strip() == ""


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_completions_answer_for_an_agents_prompt_and_refuse_unknown_ones(
    urls: Any, mode: str
) -> None:
    async with Client(urls["stateless"], mode=mode) as client:
        if mode == "legacy":  # a 2026-07-28 client learns capabilities only by asking
            assert client.server_capabilities.completions is not None
        adder = PromptReference(type="ref/prompt", name="adder")
        answer = await client.complete(adder, {"name": "message", "value": "ad"})
        assert answer.completion.values == []
        for ref, argument in [
            (PromptReference(type="ref/prompt", name="nobody"), "message"),
            (adder, "colour"),
            (ResourceTemplateReference(type="ref/resource", uri="agent://{name}"), "name"),
        ]:
            with pytest.raises(MCPError) as raised:
                await client.complete(ref, {"name": argument, "value": "x"})
            assert raised.value.error.code == INVALID_PARAMS


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_stateless_set_level_applies_to_the_principals_later_calls(urls: Any) -> None:
    # No session: the level is kept for the caller's principal (here the anonymous one).
    messages = Messages()
    async with Client(urls["stateless"], mode="legacy", logging_callback=messages) as client:
        await client.set_logging_level("info")
        await client.call_tool("adder", {"message": "go"})
        assert messages.events() == [("info", "tool_started")]
        messages.received.clear()
        await client.set_logging_level("error")
        await client.call_tool("exploder", {"message": "go"})
        assert messages.events() == []
        await client.set_logging_level("warning")  # the default again, for the other tests
