"""The AI SDK UI message stream in-process: text, the agent's tools, ask_user as a call
the client answers, usage, errors."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager

from agenthost.agents import ASK_USER, ChatAgent, ModelBusy, tool
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _adder(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"The sum is {last.parts[0].content}."  # type: ignore[union-attr]
    return ["Let me add. ", call("add", '{"a": 2, "b": 3}')]


def _asker(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {last.parts[0].content}."  # type: ignore[union-attr]
    return call("ask_user", '{"question": "What is your name?"}')


def _failing(request: ModelRequest) -> Reply:
    raise ModelBusy("the upstream is busy")


AGENTS = {
    "echo": ChatAgent("echo", EchoModel()),
    "adder": ChatAgent("adder", FunctionModel(_adder), tools=(add,)),
    "asker": ChatAgent("asker", FunctionModel(_asker), tools=(ASK_USER,)),
    "failing": ChatAgent("failing", FunctionModel(_failing)),
}


@asynccontextmanager
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(adapters=["ai_sdk"], playground=False), AGENTS)  # type: ignore[arg-type]
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost/ai-sdk") as c:
            yield c


def user(text: str) -> dict[str, Any]:
    return {"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": text}]}


async def chat(c: httpx.AsyncClient, agent: str, messages: list[dict[str, Any]]) -> list[Any]:
    body = {"id": "chat-1", "messages": messages, "trigger": "submit-message"}
    answer = await c.post(f"/{agent}", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-vercel-ai-ui-message-stream"] == "v1"
    lines = [line.removeprefix("data: ") for line in answer.text.split("\n\n") if line]
    assert lines[-1] == "[DONE]"
    return [orjson.loads(line) for line in lines[:-1]]


def kinds(chunks: list[Any]) -> list[str]:
    return [c["type"] for c in chunks if c["type"] != "text-delta"]


def text(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


async def test_text_and_usage() -> None:
    async with client() as c:
        chunks = await chat(c, "echo", [user("hello there")])
    assert kinds(chunks) == [
        "start",
        "start-step",
        "text-start",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert text(chunks) == "hello there"
    finish = chunks[-1]
    assert finish["finishReason"] == "stop"
    usage = finish["messageMetadata"]["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"] > 0


async def test_the_agents_tool_shows_its_input_and_output_in_two_steps() -> None:
    async with client() as c:
        chunks = await chat(c, "adder", [user("2 + 3?")])
    assert kinds(chunks) == [
        "start",
        "start-step",
        "text-start",
        "text-end",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-end",
        "finish-step",
        "finish",
    ]
    [available] = [c for c in chunks if c["type"] == "tool-input-available"]
    assert available["toolName"] == "add" and available["input"] == {"a": 2, "b": 3}
    [output] = [c for c in chunks if c["type"] == "tool-output-available"]
    assert output["output"] == "5" and output["toolCallId"] == available["toolCallId"]


async def test_ask_user_is_a_tool_call_the_next_request_answers() -> None:
    async with client() as c:
        first = await chat(c, "asker", [hello := user("hi")])
        assert first[-1]["finishReason"] == "tool-calls"
        [asked] = [c for c in first if c["type"] == "tool-input-available"]
        assert asked["toolName"] == "ask_user"
        assert asked["input"] == {"question": "What is your name?"}
        # As useChat does after addToolOutput: the assistant message with the output.
        assistant = {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-ask_user",
                    "toolCallId": asked["toolCallId"],
                    "state": "output-available",
                    "input": asked["input"],
                    "output": "Ada",
                },
            ],
        }
        second = await chat(c, "asker", [hello, assistant])
    assert text(second) == "Nice to meet you, Ada."


async def test_a_failing_run_is_an_error_chunk() -> None:
    async with client() as c:
        chunks = await chat(c, "failing", [user("hi")])
    assert kinds(chunks) == ["start", "start-step", "error"]
    assert chunks[-1]["errorText"] == "the upstream is busy"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"messages": [{"id": "u", "role": "user", "parts": []}]}, 422),
        ({"messages": []}, 422),
        (
            {
                "messages": [
                    {
                        "id": "u",
                        "role": "user",
                        "parts": [{"type": "file", "url": "x", "mediaType": "image/png"}],
                    }
                ]
            },
            422,
        ),
        (
            {
                "messages": [
                    {"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "hi"}]}
                ]
            },
            422,
        ),
    ],
)
async def test_bad_input_is_a_4xx(body: dict[str, Any], status: int) -> None:
    async with client() as c:
        answer = await c.post("/echo", json=body)
        unknown = await c.post("/nobody", json={"messages": [user("hi")]})
    assert answer.status_code == status and answer.json()["error"]["code"] == "invalid_input"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "agent_not_found"
