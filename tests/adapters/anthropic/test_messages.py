"""``POST /v1/messages`` and ``count_tokens`` with the official anthropic SDK."""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import orjson
import pytest

from agenthost.agents import Agent, ChatAgent, Message, TextDelta, Usage
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelResponse, ModelStreamEvent
from tests.adapters.anthropic.clients import running, sdk

pytestmark = pytest.mark.anyio

seen: list[tuple[str, ...]] = []


def _reply(request: ModelRequest) -> str:
    seen.append(tuple(f"{m.role}:{m.text}" for m in request.messages))
    return "the answer"


AGENTS: dict[str, Agent] = {
    "echo": ChatAgent("echo", EchoModel()),
    "f": ChatAgent("f", FunctionModel(_reply), instructions="Agent rules."),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with running(AGENTS) as http:
        yield sdk(http)


async def test_a_message_is_the_agents_answer(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="echo", max_tokens=100, messages=[{"role": "user", "content": "hello there"}]
    )
    assert message.type == "message" and message.role == "assistant"
    assert message.id.startswith("msg_") and message.model == "echo"
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "hello there")
    ]
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


async def test_system_is_instructions_and_messages_the_history(
    client: anthropic.AsyncAnthropic,
) -> None:
    seen.clear()
    await client.messages.create(
        model="f",
        max_tokens=100,
        system="Client rules.",
        messages=[
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ],
    )
    blocks = [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]
    await client.messages.create(
        model="f",
        max_tokens=100,
        system=blocks,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "alone"}],
    )
    assert seen[0] == (
        "system:Agent rules.\n\nClient rules.",
        "user:first",
        "assistant:answer",
        "user:second",
    )
    # Stateless: nothing of the first request is kept.
    assert seen[1] == ("system:Agent rules.\n\nOne.\n\nTwo.", "user:alone")


async def test_a_stream_gives_the_text_and_the_same_final_message(
    client: anthropic.AsyncAnthropic,
) -> None:
    async with client.messages.stream(
        model="echo", max_tokens=100, messages=[{"role": "user", "content": "one two three"}]
    ) as stream:
        text = "".join([piece async for piece in stream.text_stream])
        final = await stream.get_final_message()
    assert text == "one two three"
    assert final.content[0].type == "text" and final.content[0].text == text
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


async def test_the_stream_is_anthropics_event_sequence(client: anthropic.AsyncAnthropic) -> None:
    body = {
        "model": "echo",
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": "a b"}],
    }
    answer = await client._client.post("/v1/messages", json=body)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [e for e in answer.text.split("\n\n") if e.strip()]
    names, datas = [], []
    for event in events:
        head, data = event.split("\n", 1)
        names.append(head.removeprefix("event: "))
        datas.append(orjson.loads(data.removeprefix("data: ")))
    assert [d["type"] for d in datas] == names
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        *["content_block_delta"] * (names.count("content_block_delta")),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert datas[0]["message"]["content"] == [] and datas[0]["message"]["stop_reason"] is None
    assert datas[2]["content_block"] == {"type": "text", "text": ""}
    text = "".join(d["delta"]["text"] for d in datas if d["type"] == "content_block_delta")
    assert text == "a b"
    assert datas[-2]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert datas[-2]["usage"]["output_tokens"] > 0


async def test_count_tokens_estimates_the_requests_content(
    client: anthropic.AsyncAnthropic,
) -> None:
    short = await client.messages.count_tokens(
        model="echo", messages=[{"role": "user", "content": "hi"}]
    )
    longer = await client.messages.count_tokens(
        model="echo",
        system="x" * 400,
        messages=[{"role": "user", "content": "hi"}],
        tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
    )
    # About four characters a token, plus a few a message (agents/history/tokens.py).
    assert short.input_tokens == 5
    assert longer.input_tokens > short.input_tokens + 100
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.count_tokens(
            model="nope", messages=[{"role": "user", "content": "hi"}]
        )


async def test_models_are_listed_in_anthropics_shape_to_anthropic_clients(
    client: anthropic.AsyncAnthropic,
) -> None:
    models = [model async for model in client.models.list()]
    assert [(m.type, m.id, m.display_name) for m in models] == [
        ("model", "echo", "echo"),
        ("model", "f", "f"),
    ]
    assert (await client.models.retrieve("f")).id == "f"
    with pytest.raises(anthropic.NotFoundError):
        await client.models.retrieve("nope")
    # Without anthropic-version, the same path is the OpenAI surface's list.
    openai_list = (await client._client.get("/v1/models")).json()
    assert openai_list["object"] == "list" and openai_list["data"][0]["object"] == "model"


async def test_system_turns_are_instructions_too(client: anthropic.AsyncAnthropic) -> None:
    # Claude Code sends a `system` turn among the messages (its tools' and skills' notes).
    seen.clear()
    body = {
        "model": "f",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "First."}],
        "messages": [
            {"role": "user", "content": "question"},
            {"role": "system", "content": "Second."},
        ],
    }
    answer = await client._client.post("/v1/messages", json=body)
    assert answer.status_code == 200, answer.text
    assert seen == [("system:Agent rules.\n\nFirst.\n\nSecond.", "user:question")]
    counted = await client._client.post("/v1/messages/count_tokens", json=body)
    assert counted.json()["input_tokens"] > 4


class _Truncated(BaseChatModel):
    """Answers ``max_tokens`` words of a longer text and stops there, as a model cut short."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        words = ["word"] * (request.settings.max_tokens or 1)
        for word in words:
            yield TextDelta(f"{word} ")
        text = " ".join(words) + " "
        usage = Usage(input_tokens=1, output_tokens=len(words))
        yield ModelResponse(Message.assistant(text), usage, finish_reason="length")


async def test_an_answer_cut_at_max_tokens_says_so() -> None:
    async with running({"cut": ChatAgent("cut", _Truncated())}) as http:
        client = sdk(http)
        hi: Any = [{"role": "user", "content": "talk"}]
        message = await client.messages.create(model="cut", max_tokens=3, messages=hi)
        async with client.messages.stream(model="cut", max_tokens=2, messages=hi) as stream:
            final = await stream.get_final_message()
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 3
    assert final.stop_reason == "max_tokens" and final.content[0].type == "text"
    assert final.content[0].text == "word word "
