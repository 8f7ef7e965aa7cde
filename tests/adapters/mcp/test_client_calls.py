"""An agent that asks the client for its roots (``list_roots``) and its model
(``ask_client_model``): ``roots/list`` and ``sampling/createMessage``, in every era.

The real MCP SDK client answers with its callbacks: 2026-07-28 input
requests (several in one round), handshake-era requests inside the call
(stateful, and stateless on the call's own stream, over a real socket).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from agenthost.agents import ASK_USER, ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import ASK_CLIENT_MODEL, LIST_ROOTS
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_client, mcp_settings, running_app
from tests.adapters.mcp.test_ask_user import User
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def asker() -> ChatAgent:
    """Asks for the roots, the client's model and the user at once; then reports the results."""

    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return " | ".join(f"{p.name}={p.content}" for p in last.parts)  # type: ignore[union-attr]
        return [
            call(LIST_ROOTS.name),
            call(ASK_CLIENT_MODEL.name, '{"prompt": "Greet me"}'),
            call(ASK_USER.name, '{"question": "Your name?"}'),
        ]

    return ChatAgent("asker", FunctionModel(reply), tools=(LIST_ROOTS, ASK_CLIENT_MODEL, ASK_USER))


def roots_only() -> ChatAgent:
    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"roots: {last.parts[0].content}"  # type: ignore[union-attr]
        return call(LIST_ROOTS.name)

    return ChatAgent("roots", FunctionModel(reply), tools=(LIST_ROOTS,))


AGENTS = {"asker": asker(), "roots": roots_only()}


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


async def model(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    text = types.TextContent(type="text", text="Hello!")
    return types.CreateMessageResult(role="assistant", content=text, model="client-llm")


CALLBACKS: dict[str, Any] = {
    "list_roots_callback": roots,
    "sampling_callback": model,
    "elicitation_callback": User("Ada"),
}
EXPECTED = (
    'list_roots=[{"uri":"file:///work/project","name":"project"}] | '
    "ask_client_model=Hello! | ask_user=Ada"
)


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    stateful = create_app(mcp_settings(mcp_stateless=False), AGENTS)
    stateless = create_app(mcp_settings(mcp_stateless=True), AGENTS)
    with (
        serve_in_thread(stateful, lifespan=True) as one,
        serve_in_thread(stateless, lifespan=True) as other,
    ):
        yield {"stateful": f"{one}/mcp", "stateless": f"{other}/mcp"}


async def test_2026_one_round_asks_for_roots_the_model_and_the_user() -> None:
    async with (
        running_app(AGENTS) as app,
        mcp_client(app, mode="2026-07-28", **CALLBACKS) as client,
    ):
        result = await client.call_tool("asker", {"message": "go"})
    assert result.structured_content is not None
    assert result.structured_content["text"] == EXPECTED


@pytest.mark.parametrize("where", ["stateful", "stateless"])
async def test_handshake_era_requests_inside_the_call(urls: dict[str, str], where: str) -> None:
    async with Client(urls[where], mode="legacy", **CALLBACKS) as client:
        result = await client.call_tool("asker", {"message": "go"})
    assert result.structured_content is not None
    assert result.structured_content["text"] == EXPECTED


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_without_roots_gives_the_agent_an_error_result(mode: str) -> None:
    async with running_app(AGENTS) as app, mcp_client(app, mode=mode) as client:
        result = await client.call_tool("roots", {"message": "go"})
    assert result.structured_content is not None
    text = result.structured_content["text"]
    assert result.structured_content["status"] == "completed"
    assert text.startswith("roots: the client cannot answer list_roots"), text
