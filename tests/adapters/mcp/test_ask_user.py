"""An agent that asks its user (``ask_user``): elicitation where the client can, else a question."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitRequestParams, ElicitResult, TextContent

from agenthost.agents import ASK_USER, ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_client, mcp_settings, running_app
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio


def weather_agent() -> ChatAgent:
    """Asks for the city, then answers with it."""

    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"It is sunny in {last.parts[0].content}."  # type: ignore[union-attr]
        return call("ask_user", '{"question": "Which city?"}')

    return ChatAgent("weather", FunctionModel(reply), tools=(ASK_USER,))


class User:
    """An elicitation callback that answers with ``answer`` (or declines) and records questions."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        if self.answer is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"answer": self.answer})


def text(result: Any) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


@pytest.mark.slow
@pytest.mark.parametrize("stateless", [False, True])
async def test_a_handshake_client_is_asked_by_elicitation(stateless: bool) -> None:
    user = User("Oslo")
    app = create_app(mcp_settings(mcp_stateless=stateless), {"weather": weather_agent()})
    # A real socket: the elicitation request travels on the call's open response stream
    # (stateless: the answer is a POST of its own, routed by the request's id).
    with serve_in_thread(app, lifespan=True) as url:
        async with Client(f"{url}/mcp", mode="legacy", elicitation_callback=user) as client:
            result = await client.call_tool("weather", {"message": "weather?"})
    assert user.asked == ["Which city?"]
    assert result.structured_content == {
        "text": "It is sunny in Oslo.",
        "status": "completed",
        "session_id": None,
    }


async def test_a_2026_client_is_asked_by_an_input_required_result() -> None:
    user = User("Bergen")
    async with (
        running_app({"weather": weather_agent()}) as app,
        mcp_client(app, mode="2026-07-28", elicitation_callback=user) as client,
    ):
        result = await client.call_tool("weather", {"message": "weather?", "session_id": "w"})
    assert user.asked == ["Which city?"]
    assert result.structured_content == {
        "text": "It is sunny in Bergen.",
        "status": "completed",
        "session_id": "w",
    }


@pytest.mark.parametrize(
    ("mode", "elicits"),
    [
        ("legacy", False),  # the client cannot answer elicitations
        ("2026-07-28", False),
    ],
)
async def test_otherwise_the_question_is_the_result_and_the_next_call_answers_it(
    mode: str, elicits: bool
) -> None:
    options = {"elicitation_callback": User("never used")} if elicits else {}
    async with (
        running_app({"weather": weather_agent()}) as app,
        mcp_client(app, mode=mode, **options) as client,
    ):
        asked = await client.call_tool("weather", {"message": "weather?"})
        assert not asked.is_error and asked.structured_content is not None
        assert asked.structured_content["status"] == "input_required"
        assert asked.structured_content["text"] == "Which city?"
        session_id = asked.structured_content["session_id"]
        assert isinstance(session_id, str) and session_id
        assert session_id in text(asked)
        answered = await client.call_tool(
            "weather", {"message": "Tromsø", "session_id": session_id}
        )
    assert answered.structured_content == {
        "text": "It is sunny in Tromsø.",
        "status": "completed",
        "session_id": session_id,
    }


async def test_a_declined_elicitation_leaves_the_question_open() -> None:
    async with (
        running_app({"weather": weather_agent()}) as app,
        mcp_client(app, mode="2026-07-28", elicitation_callback=User(None)) as client,
    ):
        asked = await client.call_tool("weather", {"message": "weather?", "session_id": "d"})
        assert asked.structured_content is not None
        assert asked.structured_content["status"] == "input_required"
        # Answered by a plain call with the session id, the run goes on.
        answered = await client.call_tool("weather", {"message": "Oslo", "session_id": "d"})
        assert answered.structured_content is not None
        assert answered.structured_content["text"] == "It is sunny in Oslo."
