"""Tools over the Messages API with the official anthropic SDK.

The agent's model is the ``openai`` provider on the fake upstream, which
calls the client's tools when asked ("use NAME with JSON") and the agent's
own calculator for "calculate X": the client's come back as ``tool_use``
blocks, the calculator runs on the server.
"""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import orjson
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from tests.adapters.anthropic.clients import running, sdk
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

WEATHER: Any = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
ASK = 'use get_weather with {"city": "Paris"}'


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[anthropic.AsyncAnthropic]:
    _, url = upstream
    relay = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agents: dict[str, Agent] = {"relay": ChatAgent("relay", relay, tools=(calculator,))}
    async with running(agents) as http:
        yield sdk(http)
    await relay.aclose()


def answered(first: Any, result: str) -> list[Any]:
    """The conversation after ``first`` asked for the weather, with the tool's ``result``."""
    (call,) = [b for b in first.content if b.type == "tool_use"]
    block = {"type": "tool_result", "tool_use_id": call.id, "content": result}
    return [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [block]},
    ]


async def test_a_client_tool_round_trip(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    first = await client.messages.create(
        model="relay", max_tokens=100, tools=[WEATHER], messages=[{"role": "user", "content": ASK}]
    )
    assert first.stop_reason == "tool_use"
    (call,) = first.content
    assert call.type == "tool_use" and call.name == "get_weather"
    assert call.input == {"city": "Paris"}
    # The model saw the agent's own tool and the client's.
    assert [t["function"]["name"] for t in fake.requests[-1]["tools"]] == [
        "calculator",
        "get_weather",
    ]
    second = await client.messages.create(
        model="relay", max_tokens=100, tools=[WEATHER], messages=answered(first, "sunny, 21 °C")
    )
    assert second.stop_reason == "end_turn"
    assert [b.text for b in second.content if b.type == "text"] == ["The result is sunny, 21 °C."]
    # The upstream got the call and its result as OpenAI messages.
    sent = fake.requests[-1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert (sent[-1]["role"], sent[-1]["tool_call_id"]) == ("tool", call.id)
    assert sent[-1]["content"] == "sunny, 21 °C"


async def test_a_streamed_client_tool_call_streams_its_input(
    client: anthropic.AsyncAnthropic,
) -> None:
    async with client.messages.stream(
        model="relay", max_tokens=100, tools=[WEATHER], messages=[{"role": "user", "content": ASK}]
    ) as stream:
        pieces = [
            event.delta.partial_json
            async for event in stream
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta"
        ]
        final = await stream.get_final_message()
    assert len(pieces) > 1 and "".join(pieces) == '{"city": "Paris"}'
    assert final.stop_reason == "tool_use"
    (call,) = final.content
    assert call.type == "tool_use" and call.input == {"city": "Paris"}
    second = await client.messages.create(
        model="relay", max_tokens=100, tools=[WEATHER], messages=answered(final, "rain")
    )
    assert second.content[0].type == "text" and second.content[0].text == "The result is rain."


async def test_text_then_a_call_are_two_blocks(client: anthropic.AsyncAnthropic) -> None:
    ask = 'Let me look; use get_weather with {"city": "Oslo"}'
    body = {
        "model": "relay",
        "max_tokens": 100,
        "tools": [WEATHER],
        "messages": [{"role": "user", "content": ask}],
    }
    answer = await client._client.post("/v1/messages", json={**body, "stream": True})
    events = [orjson.loads(e.split("data: ", 1)[1]) for e in answer.text.split("\n\n") if e]
    starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert starts == ["text", "tool_use"] and stops == [0, 1]
    message = await client.messages.create(**body)
    assert [b.type for b in message.content] == ["text", "tool_use"]


async def test_the_agents_own_tool_runs_on_the_server(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    message = await client.messages.create(
        model="relay", max_tokens=100, messages=[{"role": "user", "content": "calculate 6*7"}]
    )
    assert message.stop_reason == "end_turn"
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "The result is 42.")
    ]
    assert fake.requests[-1]["messages"][-1]["role"] == "tool"  # the server ran it
    async with client.messages.stream(
        model="relay", max_tokens=100, messages=[{"role": "user", "content": "calculate 6*7"}]
    ) as stream:
        text = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    assert text.strip() == "The result is 42." and final.stop_reason == "end_turn"  # fake: "word "
    assert all(b.type == "text" for b in final.content)


async def test_tool_choice_names_a_client_tool(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    message = await client.messages.create(
        model="relay",
        max_tokens=100,
        tools=[WEATHER],
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "weather?"}],
    )
    assert fake.requests[-1]["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "not served"),
        ({"tools": [WEATHER], "tool_choice": {"type": "tool", "name": "other"}}, "tool_choice"),
        ({"tool_choice": {"type": "any"}}, "needs tools"),
        ({"tools": [{**WEATHER, "name": "calculator"}]}, "calculator"),
    ],
    ids=["server-tool", "unknown-choice", "any-without-tools", "name-taken"],
)
async def test_tools_that_cannot_be_served_are_400s(
    client: anthropic.AsyncAnthropic, extra: dict[str, Any], says: str
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=says) as caught:
        await client.messages.create(
            model="relay", max_tokens=100, messages=[{"role": "user", "content": "hi"}], **extra
        )
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": caught.value.body["error"]["message"],
        },
    }


async def test_a_tool_result_must_answer_a_tool_use(client: anthropic.AsyncAnthropic) -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_nothing", "content": "x"}
    with pytest.raises(anthropic.BadRequestError, match="tool_use_id"):
        await client.messages.create(
            model="relay", max_tokens=100, messages=[{"role": "user", "content": [block]}]
        )


SCHEMA: Any = {"type": "object", "properties": {"city": {"type": "string"}}}


async def test_request_fields_that_map_reach_the_upstream(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    cache: Any = {
        "type": "ephemeral"
    }  # cache_control: accepted and ignored, as Claude Code sends it
    message = await client.messages.create(
        model="relay",
        max_tokens=50,
        stop_sequences=["END"],
        metadata={"user_id": "user-1"},
        service_tier="auto",
        system=[{"type": "text", "text": "Be brief.", "cache_control": cache}],
        tools=[{**WEATHER, "cache_control": cache}],
        tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        output_config={"format": {"type": "json_schema", "schema": SCHEMA}},
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cache}]}
        ],
        extra_body={"temperature": 0.5, "top_p": 0.9, "cache_control": cache},
    )
    assert message.stop_reason == "end_turn"
    sent = fake.requests[-1]
    assert (sent["max_tokens"], sent["temperature"], sent["top_p"]) == (50, 0.5, 0.9)
    assert sent["stop"] == ["END"]
    assert (sent["tool_choice"], sent["parallel_tool_calls"]) == ("auto", False)
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA},
    }
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}


@pytest.mark.parametrize(("choice", "sent"), [("none", "none"), ("any", "required")])
async def test_tool_choice_modes(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str], choice: str, sent: str
) -> None:
    fake, _ = upstream
    await client.messages.create(
        model="relay",
        max_tokens=100,
        tools=[WEATHER],
        tool_choice={"type": choice},  # type: ignore[misc,arg-type]
        messages=[{"role": "user", "content": "hi"}],
    )
    assert fake.requests[-1]["tool_choice"] == sent


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"mcp_servers": [{"type": "url", "url": "https://x", "name": "x"}]}, "mcp_servers"),
        ({"container": "container_1"}, "container"),
        ({"top_k": 5}, "top_k"),
    ],
    ids=["mcp-servers", "container", "top-k"],
)
async def test_fields_that_cannot_be_served_are_400s(
    client: anthropic.AsyncAnthropic, extra: dict[str, Any], says: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(
            model="relay",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            extra_body=extra,
        )
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error" and error["message"].startswith(f"{says}: ")
