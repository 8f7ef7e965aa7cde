"""A client tool's call streams its arguments as the upstream streams them (issue 20).

The agent's model is the ``openai`` provider on the fake upstream, which
streams a call as OpenAI does: id and name, then the arguments in pieces of
``ARGUMENT_PIECE`` characters. Through the official SDK, Chat Completions
and Responses relay those pieces one by one, not one empty fragment and then
the whole JSON; the agent's own tools never show.
"""

import json
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openresponses_types import types as spec

from agenthost.agents import Agent, ChatAgent, Message, ToolCallDelta, ToolCallPart, Usage
from agenthost.agents.models import BaseChatModel, ModelRequest, ModelResponse, ModelStreamEvent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from tests.adapters.openai.clients import openai_client, running
from tests.adapters.openai.test_client_tools import TIME, WEATHER, responses_tool
from tests.upstream import ARGUMENT_PIECE, FakeUpstream

pytestmark = pytest.mark.anyio

PARIS = '{"city": "Paris"}'


@pytest.fixture
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[openai.AsyncOpenAI]:
    _, url = upstream
    relay = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agents: dict[str, Agent] = {"relay": ChatAgent("relay", relay, tools=(calculator,))}
    async with openai_client(agents, max_retries=0) as client:
        yield client
    await relay.aclose()


def pieces(arguments: str) -> list[str]:
    return [arguments[i : i + ARGUMENT_PIECE] for i in range(0, len(arguments), ARGUMENT_PIECE)]


async def chat_fragments(client: openai.AsyncOpenAI, text: str) -> list[Any]:
    stream = await client.chat.completions.create(
        model="relay",
        messages=[{"role": "user", "content": text}],
        tools=[WEATHER, TIME],
        stream=True,
    )
    return [call async for chunk in stream for call in chunk.choices[0].delta.tool_calls or ()]


async def test_chat_relays_each_piece_of_the_arguments(client: openai.AsyncOpenAI) -> None:
    head, *rest = await chat_fragments(client, f"use get_weather with {PARIS}")
    assert (head.index, head.id, head.type) == (0, "call_up_1", "function")
    assert head.function.name == "get_weather"
    assert head.function.arguments == ""
    assert all(f.id is None and f.function.name is None for f in rest)
    assert [f.function.arguments for f in rest] == pieces(PARIS)
    assert len(rest) > 2


async def test_two_streamed_calls_keep_their_indexes(client: openai.AsyncOpenAI) -> None:
    fragments = await chat_fragments(client, "use get_weather and get_time")
    heads = [(f.index, f.function.name) for f in fragments if f.id is not None]
    assert heads == [(0, "get_weather"), (1, "get_time")]
    for index in (0, 1):
        arguments = "".join(f.function.arguments or "" for f in fragments if f.index == index)
        assert arguments == "{}"


async def test_the_sdk_stream_helper_sees_every_piece(client: openai.AsyncOpenAI) -> None:
    async with client.chat.completions.stream(
        model="relay",
        messages=[{"role": "user", "content": f"Let me see.; use get_weather with {PARIS}"}],
        tools=[WEATHER],
    ) as stream:
        deltas = [
            event.arguments_delta
            async for event in stream
            if event.type == "tool_calls.function.arguments.delta"
        ]
        final = await stream.get_final_completion()
    assert [d for d in deltas if d] == pieces(PARIS)
    message = final.choices[0].message
    assert message.content == "Let me see. "  # the fake streams word + " "
    (call,) = message.tool_calls or []
    assert call.function.arguments == PARIS
    assert final.choices[0].finish_reason == "tool_calls"


async def test_the_agents_own_calls_are_not_streamed(client: openai.AsyncOpenAI) -> None:
    assert await chat_fragments(client, "calculate 6*7") == []


async def response_events(client: openai.AsyncOpenAI, text: str) -> tuple[list[Any], Any]:
    async with client.responses.stream(
        model="relay", input=text, tools=[responses_tool(WEATHER), responses_tool(TIME)]
    ) as stream:
        events = [event async for event in stream]
        return events, await stream.get_final_response()


async def test_responses_relay_each_piece_of_the_arguments(client: openai.AsyncOpenAI) -> None:
    events, final = await response_events(client, f"use get_weather with {PARIS}")
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [(e.output_index, e.item.type, e.item.arguments) for e in added] == [
        (0, "function_call", "")
    ]
    item = added[0].item
    deltas = [e for e in events if e.type == "response.function_call_arguments.delta"]
    assert [e.delta for e in deltas] == pieces(PARIS)
    assert {(e.item_id, e.output_index) for e in deltas} == {(item.id, 0)}
    # Added before the first piece, done after the last.
    kinds = [e.type for e in events]
    assert kinds.index("response.output_item.added") < kinds.index(deltas[0].type)
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == PARIS and done.item_id == item.id
    (call,) = final.output
    assert (call.type, call.id, call.call_id, call.arguments) == (
        "function_call",
        item.id,
        item.call_id,
        PARIS,
    )
    stored = await client.responses.retrieve(final.id)
    assert [i.id for i in stored.output] == [item.id]


async def test_responses_keep_the_order_items_opened_in(client: openai.AsyncOpenAI) -> None:
    events, final = await response_events(client, "Checking.; use get_weather and get_time")
    added = [
        (e.output_index, e.item.type) for e in events if e.type == "response.output_item.added"
    ]
    assert added == [(0, "message"), (1, "function_call"), (2, "function_call")]
    done = [(e.output_index, e.item.type) for e in events if e.type == "response.output_item.done"]
    assert sorted(done) == added
    assert [i.type for i in final.output] == ["message", "function_call", "function_call"]
    assert final.output_text == "Checking. "
    by_item: dict[str, str] = {}
    for event in events:
        if event.type == "response.function_call_arguments.delta":
            by_item[event.item_id] = by_item.get(event.item_id, "") + event.delta
    calls = [i for i in final.output if i.type == "function_call"]
    assert [by_item[c.id] for c in calls] == [c.arguments for c in calls]


class StreamedCallModel(BaseChatModel):
    """Streams one call of ``lookup`` in ``pieces`` and settles it as ``arguments``."""

    def __init__(self, pieces: list[str], arguments: str) -> None:
        self.pieces, self.arguments = pieces, arguments

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        for piece in self.pieces:
            yield ToolCallDelta(0, "call_1", "lookup", piece)
        call = ToolCallPart(id="call_1", name="lookup", arguments=self.arguments)
        yield ModelResponse(Message(role="assistant", parts=[call]), Usage(1, 1, 1), "stop")


LOOKUP = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}


@pytest.mark.parametrize(("streamed", "settled"), [([""], "{}"), (['{"q"', ": 1}"], '{"q": 1}')])
async def test_what_the_final_call_adds_is_sent_at_the_end(
    streamed: list[str], settled: str
) -> None:
    agents: dict[str, Agent] = {"caller": ChatAgent("caller", StreamedCallModel(streamed, settled))}
    async with running(agents) as (_, http):
        chat = await http.post(
            "/v1/chat/completions",
            json={
                "model": "caller",
                "messages": [{"role": "user", "content": "find"}],
                "tools": [
                    {"type": "function", "function": {k: LOOKUP[k] for k in ("name", "parameters")}}
                ],
                "stream": True,
            },
        )
        responses = await http.post(
            "/v1/responses",
            json={"model": "caller", "input": "find", "tools": [LOOKUP], "stream": True},
        )
    fragments = [
        call["function"]["arguments"]
        for event in sse_data(chat.text)
        for choice in event.get("choices", ())
        for call in choice["delta"].get("tool_calls") or ()
    ]
    assert "".join(fragments) == settled
    events = sse_data(responses.text)
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == settled
    for event in events:  # each event as the Open Responses spec defines it
        spec_event(event["type"]).model_validate(event)


def sse_data(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in body.splitlines()
        if line.startswith("data: {")
    ]


def spec_event(type: str) -> Any:
    """The Open Responses model of a stream event (``response.output_item.added`` →
    ``ResponseOutputItemAddedStreamingEvent``)."""
    words = type.replace(".", "_").split("_")
    return getattr(spec, "".join(w.title() for w in words) + "StreamingEvent")
