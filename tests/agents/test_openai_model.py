"""The ``openai`` provider against a real HTTP fake of an upstream server."""

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from agenthost.agents import (
    ChatAgent,
    ClientTool,
    ModelBusy,
    ModelError,
    ModelSettings,
    RunOptions,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    UserError,
)
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.openai_format import ChatStreamAccumulator
from agenthost.agents.tools import calculator
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


@pytest.fixture
async def agent_on() -> AsyncIterator[Callable[..., ChatAgent]]:
    """Builds agents on an upstream; their HTTP clients close after the test."""
    async with AsyncExitStack() as stack:

        def build(url: str, model: str = "gpt-test", **kwargs: Any) -> ChatAgent:
            provider = OpenAIModel(model, base_url=url, api_key="sk-test", max_retries=0)
            agent = ChatAgent("up", provider, **kwargs)
            stack.push_async_callback(provider.aclose)
            return agent

        yield build


async def test_plain_text(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    agent = agent_on(url, instructions="Be kind.", model_settings=ModelSettings(temperature=0.5))
    result = await agent.run("hello there")
    assert result.output == "upstream says: hello there"
    assert result.usage.input_tokens == 4 and result.usage.output_tokens == 4
    sent = fake.requests[-1]
    assert sent["model"] == "gpt-test"
    assert sent["temperature"] == 0.5
    assert sent["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hello there"},
    ]
    assert "tools" not in sent


async def test_streaming(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    updates = [u async for u in agent_on(url).run_stream("stream me")]
    deltas = [u.text for u in updates if isinstance(u, TextDelta)]
    assert len(deltas) > 2
    assert "".join(deltas).strip() == "upstream says: stream me"
    assert fake.requests[-1]["stream_options"] == {"include_usage": True}
    assert updates[-1].result.usage.output_tokens == 4  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", [False, True])
async def test_reasoning_tokens_are_summed_over_the_runs_model_calls(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str], stream: bool
) -> None:
    _, url = upstream
    agent = agent_on(url, "reasoner", tools=(calculator,))
    if stream:
        updates = [u async for u in agent.run_stream("calculate 6*7")]
        usage = updates[-1].result.usage  # type: ignore[union-attr]
    else:
        usage = (await agent.run("calculate 6*7")).usage
    # "Thinking about calculate 6*7." then "Thinking about 42.": a word a token.
    assert (usage.requests, usage.reasoning_tokens) == (2, 4 + 3)
    # Within the output: the call (1) and "The result is 42." (4), each with its reasoning.
    assert usage.output_tokens == 1 + 4 + 4 + 3
    # Ollama counts none: its usage reads with none.
    ollama = await agent_on(url, "reasoner-ollama").run("hi")
    assert ollama.usage.reasoning_tokens == 0 and ollama.usage.output_tokens > 0


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_call_round_trip(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str], stream: bool
) -> None:
    fake, url = upstream
    agent = agent_on(url, tools=(calculator,))
    if stream:
        updates = [u async for u in agent.run_stream("calculate 6*7")]
        assert [u.result.content for u in updates if isinstance(u, ToolCallFinished)] == ["42"]
        output = updates[-1].result.output  # type: ignore[union-attr]
    else:
        output = (await agent.run("calculate 6*7")).output
    assert output.strip() == "The result is 42."
    offered = fake.requests[-2]["tools"][0]["function"]
    assert offered["name"] == "calculator"
    assert offered["parameters"]["required"] == ["expression"]
    # The follow-up carried the call and its result back to the upstream.
    follow_up = fake.requests[-1]["messages"]
    assert follow_up[-2]["tool_calls"][0]["function"] == {
        "name": "calculator",
        "arguments": '{"expression": "6*7"}',
    }
    assert follow_up[-1] == {"role": "tool", "tool_call_id": "call_up_1", "content": "42"}


async def test_upstream_failure_is_a_model_error(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    _, url = upstream
    with pytest.raises(ModelError, match="upstream model 'broken' failed"):
        await agent_on(url, model="broken").run("hi")
    with pytest.raises(ModelError):
        _ = [u async for u in agent_on(url, model="broken").run_stream("hi")]


async def test_the_key_comes_from_the_environment_only_for_the_default_base_url(
    upstream: tuple[FakeUpstream, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, url = upstream
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    for model in (OpenAIModel("gpt-test"), OpenAIModel("gpt-test", base_url=url)):
        async with model.lifespan():
            await ChatAgent("up", model).run("hi")
    # The SDK's convention when nothing is configured; never to a configured server.
    assert fake.keys[-2:] == ["Bearer sk-from-env", "Bearer unused"]


async def test_upstream_refusals_keep_their_meaning(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    _, url = upstream
    with pytest.raises(UserError, match="maximum context length is 128") as refused:
        await agent_on(url, model="too-long").run("hi")
    assert refused.value.param == "messages"
    with pytest.raises(ModelBusy, match="rate limited: Slow down") as busy:
        _ = [u async for u in agent_on(url, model="busy").run_stream("hi")]
    assert busy.value.retry_after == 7
    # An exhausted quota is the server's problem, not the caller's to retry.
    with pytest.raises(ModelError, match="quota") as quota:
        await agent_on(url, model="no-quota").run("hi")
    assert not isinstance(quota.value, ModelBusy)


async def test_a_malformed_upstream_answer_is_a_model_error(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    _, url = upstream
    with pytest.raises(ModelError, match="sent a malformed response"):
        await agent_on(url, model="malformed").run("hi")
    with pytest.raises(ModelError, match="sent a malformed response"):
        _ = [u async for u in agent_on(url, model="malformed").run_stream("hi")]
    with pytest.raises(ModelError, match="sent a malformed response"):
        await agent_on(url, model="not-json").run("hi")


async def test_unreachable_upstream_is_a_model_error(agent_on: Callable[..., ChatAgent]) -> None:
    agent = agent_on("http://127.0.0.1:9/v1")
    with pytest.raises(ModelError, match=r"failed: cannot connect to the upstream") as failed:
        await agent.run("hi")
    # Where the upstream runs is nobody's business but the operator's (it is logged).
    assert "127.0.0.1" not in str(failed.value) and ":9" not in str(failed.value)


async def test_tool_choice_goes_upstream_only_with_tools(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    auto = ModelSettings(tool_choice="auto", parallel_tool_calls=False)
    await agent_on(url, model_settings=auto).run("hi")
    assert "tool_choice" not in fake.requests[-1] and "parallel_tool_calls" not in fake.requests[-1]
    forced = ModelSettings(tool_choice="calculator")
    await agent_on(url, tools=(calculator,), model_settings=forced).run("hi")
    # The forced choice holds for the first step; the follow-up after the tool is free.
    first, follow_up = fake.requests[-2:]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "calculator"}}
    assert "tool_choice" not in follow_up
    with pytest.raises(UserError, match="needs tools") as refused:
        await agent_on(url, model_settings=ModelSettings(tool_choice="required")).run("hi")
    assert refused.value.param == "tool_choice"


async def test_a_streamed_call_comes_in_pieces_but_only_a_client_tools(
    agent_on: Callable[..., ChatAgent], upstream: tuple[FakeUpstream, str]
) -> None:
    _, url = upstream
    weather = ClientTool(name="get_weather", description="", parameters={"type": "object"})
    agent = agent_on(url, tools=(calculator,))
    options = RunOptions(tools=(weather,))
    asked = 'use get_weather with {"city": "Paris"}'
    updates = [u async for u in agent.run_stream(asked, options=options)]
    deltas = [u for u in updates if isinstance(u, ToolCallDelta)]
    assert {(d.index, d.id, d.name) for d in deltas} == {(0, "call_up_1", "get_weather")}
    assert len(deltas) > 3 and deltas[0].arguments == ""
    (pending,) = updates[-1].result.pending  # type: ignore[union-attr]
    assert "".join(d.arguments for d in deltas) == pending.arguments == '{"city": "Paris"}'
    # The agent's own calculator is the agent's business: its pieces stay inside.
    own = [u async for u in agent.run_stream("calculate 6*7", options=options)]
    assert not [u for u in own if isinstance(u, ToolCallDelta)]


def test_the_accumulator_holds_pieces_until_the_name_and_settles_an_empty_call() -> None:
    accumulator = ChatStreamAccumulator()

    def fragment(**call: Any) -> dict[str, Any]:
        return {"choices": [{"delta": {"tool_calls": [{"index": 1, **call}]}}]}

    accumulator.add(fragment(function={"arguments": '{"a"'}))
    assert accumulator.take_call_deltas() == []  # whose call it is is not known yet
    accumulator.add(fragment(function={"name": "f", "arguments": ": 1}"}))
    accumulator.add(fragment(function={"arguments": ""}))
    assert accumulator.take_call_deltas() == [ToolCallDelta(1, "call_1", "f", '{"a": 1}')]
    accumulator.add(
        {
            "choices": [
                {"delta": {"tool_calls": [{"index": 2, "id": "c2", "function": {"name": "g"}}]}}
            ]
        }
    )
    assert accumulator.take_call_deltas() == [ToolCallDelta(2, "c2", "g", "")]
    calls = accumulator.response().message.tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("call_1", '{"a": 1}'), ("c2", "{}")]
