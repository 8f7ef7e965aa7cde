"""Chat Completions and Models through the official openai SDK, in-process."""

import anyio
import openai
import pytest

from agenthost.agents import Agent, ChatAgent, FunctionAgent, Message
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator
from tests.adapters.openai.clients import openai_client
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


def agents(*extra: Agent) -> dict[str, Agent]:
    echo = ChatAgent("echo", EchoModel(), description="Repeats what you say.")
    return {a.name: a for a in (echo, *extra)}


async def test_models_list_and_retrieve() -> None:
    async with openai_client(agents()) as client:
        models = await client.models.list()
        assert [m.id for m in models.data] == ["echo"]
        assert models.data[0].owned_by == "agenthost"
        assert (await client.models.retrieve("echo")).id == "echo"
        with pytest.raises(openai.NotFoundError) as caught:
            await client.models.retrieve("nope")
        assert caught.value.code == "model_not_found"


async def test_a_plain_completion() -> None:
    async with openai_client(agents()) as client:
        completion = await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hello world"}]
        )
    choice = completion.choices[0]
    assert choice.message.content == "hello world"
    assert choice.message.role == "assistant"
    assert choice.finish_reason == "stop"
    assert choice.message.tool_calls is None
    assert completion.usage is not None and completion.usage.total_tokens == 4
    assert completion.id.startswith("chatcmpl-") and completion.model == "echo"


async def test_a_streamed_completion_with_usage() -> None:
    async with openai_client(agents()) as client:
        stream = await client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "one two three"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    assert len({c.id for c in chunks}) == 1 and len({c.created for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 3
    assert all(c.usage is None for c in chunks[:-1])


async def test_the_stream_helper() -> None:
    async with (
        openai_client(agents()) as client,
        client.chat.completions.stream(
            model="echo", messages=[{"role": "user", "content": "streamed helper"}]
        ) as stream,
    ):
        events = [event.type async for event in stream]
        final = await stream.get_final_completion()
    assert "content.delta" in events and "content.done" in events
    assert final.choices[0].message.content == "streamed helper"


async def test_system_messages_become_instructions_and_messages_the_history() -> None:
    seen: list[tuple[str, ...]] = []

    def reply(request: ModelRequest) -> str:
        seen.append(tuple(f"{m.role}:{m.text}" for m in request.messages))
        return "ok"

    agent = ChatAgent("f", FunctionModel(reply), instructions="Agent rules.")
    async with openai_client(agents(agent)) as client:
        await client.chat.completions.create(
            model="f",
            messages=[
                {"role": "system", "content": "Client rules."},
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "answer"},
                {"role": "developer", "content": "More rules."},
                {"role": "user", "content": "second"},
            ],
        )
        # Stateless: a second request with only the last turn sees no history.
        await client.chat.completions.create(
            model="f", messages=[{"role": "user", "content": "alone"}]
        )
    assert seen[0] == (
        "system:Agent rules.\n\nClient rules.\n\nMore rules.",
        "user:first",
        "assistant:answer",
        "user:second",
    )
    assert seen[1] == ("system:Agent rules.", "user:alone")


async def test_the_agents_own_tool_calls_are_not_the_clients() -> None:
    def scripted() -> ChatAgent:
        model = ScriptedModel([call("calculator", '{"expression": "2+2"}'), "It is 4."])
        return ChatAgent("calc", model, tools=(calculator,))

    async with openai_client(agents(scripted())) as client:
        completion = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "2+2?"}]
        )
        assert completion.choices[0].message.tool_calls is None
        assert completion.choices[0].message.content == "It is 4."
        assert completion.choices[0].finish_reason == "stop"
    async with openai_client(agents(scripted())) as client:
        stream = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "2+2?"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert all(c.choices[0].delta.tool_calls is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "It is 4."


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 2}, "n"),
        ({"tools": [{"type": "custom", "custom": {"name": "f"}}]}, "tools[0].type"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"logprobs": True}, "logprobs"),
        ({"temperature": 5}, "temperature"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "system", "content": "only rules"}]}, "messages"),
    ],
)
async def test_what_the_agent_cannot_honour_is_refused_naming_the_param(
    extra: dict[str, object], param: str
) -> None:
    body: dict[str, object] = {
        "model": "echo",
        "messages": [{"role": "user", "content": "x"}],
        **extra,
    }
    async with openai_client(agents()) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(**body)  # type: ignore[call-overload]
        assert caught.value.param == param
        # ... and the server keeps serving.
        ok = await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "still here"}]
        )
        assert ok.choices[0].message.content == "still here"


async def test_unknown_model_is_404() -> None:
    async with openai_client(agents()) as client:
        with pytest.raises(openai.NotFoundError) as caught:
            await client.chat.completions.create(
                model="ghost", messages=[{"role": "user", "content": "x"}]
            )
    assert caught.value.code == "model_not_found" and caught.value.param == "model"


class Failing:
    """Counts runs, so a retried failure would show."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, messages: list[Message]) -> str:
        self.runs += 1
        raise RuntimeError("agent bug")


async def test_an_agent_failure_is_a_5xx_the_sdk_does_not_retry() -> None:
    failing = Failing()
    async with openai_client(agents(FunctionAgent("bad", failing))) as client:
        with pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(
                model="bad", messages=[{"role": "user", "content": "x"}]
            )
        assert caught.value.response.headers["x-should-retry"] == "false"
        assert caught.value.body == {
            "message": "internal error: RuntimeError",
            "type": "server_error",
            "param": None,
            "code": "internal_error",
        }
        assert failing.runs == 1
        # Streamed, the answer started at once: the failure is the stream's error chunk,
        # which the SDK raises as an APIError with the same body (and does not retry).
        stream = await client.chat.completions.create(
            model="bad", messages=[{"role": "user", "content": "x"}], stream=True
        )
        with pytest.raises(openai.APIError) as in_stream:
            async for _ in stream:
                pass
        assert in_stream.value.body == caught.value.body
        assert failing.runs == 2


async def test_a_failure_mid_stream_sends_an_error_event_and_ends_cleanly() -> None:
    class MidStreamFailure(ChatAgent):
        async def _session_turn(self, history, input, options, *, stream, session):  # type: ignore[no-untyped-def]
            turn = super()._session_turn(history, input, options, stream=stream, session=session)
            async for update in turn:
                yield update
                raise RuntimeError("lost the upstream")

    agent = MidStreamFailure("mid", FunctionModel(lambda request: "fine"))
    async with openai_client(agents(agent)) as client:
        stream = await client.chat.completions.create(
            model="mid", messages=[{"role": "user", "content": "go"}], stream=True
        )
        received: list[str] = []
        with pytest.raises(openai.APIError, match="internal error: RuntimeError"):
            async for chunk in stream:
                received.append(chunk.choices[0].delta.content or "")
        assert "".join(received) == "fine"
        ok = await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "next"}]
        )
        assert ok.choices[0].message.content == "next"


async def test_fifty_concurrent_streams_each_get_their_own_answer() -> None:
    answers: dict[int, str] = {}

    async def ask(client: openai.AsyncOpenAI, n: int) -> None:
        stream = await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": f"number {n} here"}], stream=True
        )
        answers[n] = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async with openai_client(agents()) as client:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for n in range(50):
                    group.start_soon(ask, client, n)
    assert answers == {n: f"number {n} here" for n in range(50)}


async def test_structured_output_is_passed_to_a_model_that_can_honour_it(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    async with openai_client(agents(ChatAgent("up", model))) as client:
        await client.chat.completions.create(
            model="up",
            messages=[{"role": "user", "content": "where?"}],
            response_format={"type": "json_object"},
        )
        assert fake.requests[-1]["response_format"] == {"type": "json_object"}
        await client.responses.create(
            model="up",
            input="where?",
            text={"format": {"type": "json_schema", "name": "place", "schema": schema}},
        )
    assert fake.requests[-1]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "place", "schema": schema},
    }


async def test_an_upstream_tool_round_trip_stays_inside_the_agent(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agent = ChatAgent("calc", model, tools=(calculator,))
    async with openai_client(agents(agent)) as client:
        completion = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "calculate 6*7"}]
        )
        stream = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "calculate 2+3"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert completion.choices[0].message.content == "The result is 42."
    assert completion.choices[0].message.tool_calls is None
    assert all(c.choices[0].delta.tool_calls is None for c in chunks if c.choices)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "The result is 5. "
    )
    assert fake.requests[-1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_up_1",
        "content": "5",
    }


async def test_upstream_refusals_reach_the_client_with_their_meaning(
    upstream: tuple[FakeUpstream, str],
) -> None:
    _, url = upstream
    too_long = ChatAgent("too-long", OpenAIModel("too-long", base_url=url, max_retries=0))
    busy = ChatAgent("busy", OpenAIModel("busy", base_url=url, max_retries=0))
    async with openai_client(agents(too_long, busy)) as client:
        client = client.with_options(max_retries=0)
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(
                model="too-long", messages=[{"role": "user", "content": "hi"}]
            )
        assert refused.value.param == "messages"
        assert "maximum context length" in refused.value.message
        with pytest.raises(openai.RateLimitError) as limited:
            await client.responses.create(model="busy", input="hi")
        assert limited.value.response.headers["retry-after"] == "7"
        assert "x-should-retry" not in limited.value.response.headers
