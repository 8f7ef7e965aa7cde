"""Client-side tools over Chat Completions and Responses, with the official SDK.

The agent's model is the ``openai`` provider on the fake upstream, which
calls the client's tools when asked ("use NAME with JSON"); the agent's own
calculator stays internal.
"""

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from tests.adapters.openai.clients import openai_client
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
ASK = 'use get_weather with {"city": "Paris"}'


def responses_tool(chat_tool: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", **chat_tool["function"]}


@pytest.fixture
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[openai.AsyncOpenAI]:
    _, url = upstream
    relay = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agents: dict[str, Agent] = {
        "relay": ChatAgent("relay", relay, tools=(calculator,)),
        "echo": ChatAgent("echo", EchoModel()),
    }
    async with openai_client(agents, max_retries=0) as client:
        yield client
    await relay.aclose()


async def test_a_chat_tool_round_trip(
    client: openai.AsyncOpenAI, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = await client.chat.completions.create(model="relay", messages=messages, tools=[WEATHER])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls or []
    assert call.type == "function" and call.function.name == "get_weather"
    assert call.function.arguments == '{"city": "Paris"}'
    # The model saw the agent's own tool and the client's.
    offered = [t["function"]["name"] for t in fake.requests[-1]["tools"]]
    assert offered == ["calculator", "get_weather"]
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 °C"},
    ]
    second = await client.chat.completions.create(model="relay", messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == "The result is sunny, 21 °C."
    assert second.choices[0].finish_reason == "stop"


async def test_a_streamed_chat_tool_call_comes_in_the_standard_fragments(
    client: openai.AsyncOpenAI,
) -> None:
    async with client.chat.completions.stream(
        model="relay",
        messages=[{"role": "user", "content": "use get_weather and get_time"}],
        tools=[WEATHER, TIME],
    ) as stream:
        events = [event.type async for event in stream]
        final = await stream.get_final_completion()
    assert "tool_calls.function.arguments.done" in events
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    names = [c.function.name for c in choice.message.tool_calls or []]
    assert names == ["get_weather", "get_time"]


async def test_a_responses_tool_round_trip_streamed_and_not(
    client: openai.AsyncOpenAI,
) -> None:
    tools: Any = [responses_tool(WEATHER)]
    first = await client.responses.create(model="relay", input=ASK, tools=tools)
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and call.arguments == '{"city": "Paris"}'
    assert first.output_text == ""
    assert [t.name for t in first.tools if t.type == "function"] == ["get_weather"]
    output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "rain"}]
    async with client.responses.stream(
        model="relay", input=output, previous_response_id=first.id, tools=tools
    ) as stream:
        done = await stream.get_final_response()
    assert done.output_text.strip() == "The result is rain."  # the fake streams word + " "
    # Streamed, the call arrives as a function_call item in its fragments.
    async with client.responses.stream(model="relay", input=ASK, tools=tools) as stream:
        types = [event.type async for event in stream]
        streamed = await stream.get_final_response()
    opened = types.index("response.output_item.added")
    assert types[opened + 1] == "response.function_call_arguments.delta"
    assert types[-3:] == [
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [i.type for i in streamed.output] == ["function_call"]
    items = await client.responses.input_items.list(done.id)
    assert [i.type for i in items.data] == ["function_call_output"]


@pytest.mark.parametrize(
    ("choice", "upstream_choice"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ({"type": "function", "function": {"name": "get_time"}}, None),
    ],
)
async def test_tool_choice_reaches_the_model(
    client: openai.AsyncOpenAI,
    upstream: tuple[FakeUpstream, str],
    choice: Any,
    upstream_choice: Any,
) -> None:
    fake, _ = upstream
    await client.chat.completions.create(
        model="relay",
        messages=[{"role": "user", "content": "hello"}],
        tools=[WEATHER, TIME],
        tool_choice=choice,
        parallel_tool_calls=False,
    )
    sent = fake.requests[-1]
    assert sent["tool_choice"] == (upstream_choice or choice)
    assert sent["parallel_tool_calls"] is False


async def test_a_named_tool_choice_is_honoured_and_none_keeps_tools_unused(
    client: openai.AsyncOpenAI,
) -> None:
    named: Any = {"type": "function", "name": "get_time"}
    forced = await client.responses.create(
        model="relay", input="what now?", tools=[responses_tool(TIME)], tool_choice=named
    )
    assert [i.type for i in forced.output] == ["function_call"]
    assert forced.tool_choice.type == "function"  # type: ignore[union-attr]
    unused = await client.chat.completions.create(
        model="relay",
        messages=[{"role": "user", "content": ASK}],
        tools=[WEATHER],
        tool_choice="none",
    )
    assert unused.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tool_choice": "required"}, "tool_choice"),  # echo never calls a tool
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
    ],
)
async def test_a_tool_choice_that_cannot_be_honoured_is_a_400(
    client: openai.AsyncOpenAI, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hi"}], tools=[WEATHER], **extra
        )
    assert refused.value.param == param


async def test_a_client_tool_named_like_an_agent_tool_is_a_400(client: openai.AsyncOpenAI) -> None:
    clash: Any = {"type": "function", "function": {"name": "calculator", "parameters": {}}}
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(
            model="relay", messages=[{"role": "user", "content": "hi"}], tools=[clash]
        )
    assert "'calculator'" in refused.value.message and refused.value.param == "tools"
    # The agent finds the clash when the run starts: streamed, the answer has started
    # by then, and the same 400 error is the stream's error event (an APIError).
    stream = await client.responses.create(
        model="relay", input="hi", tools=[responses_tool(clash)], stream=True
    )
    with pytest.raises(openai.APIError) as in_stream:
        async for _ in stream:
            pass
    assert in_stream.value.body == refused.value.body


async def test_the_agents_own_tools_stay_internal_beside_client_tools(
    client: openai.AsyncOpenAI,
) -> None:
    answer = await client.chat.completions.create(
        model="relay", messages=[{"role": "user", "content": "calculate 6*7"}], tools=[WEATHER]
    )
    assert answer.choices[0].message.content == "The result is 42."
    assert answer.choices[0].message.tool_calls is None
