"""The external-agent endpoint as watsonx Orchestrate calls it: streamed and non-streamed
answers (every event checked against the spec's models, :mod:`.spec`), the agent's tool
calls as step details, threads over turns, two keys apart, handoffs, bad bodies."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from itertools import groupby

import httpx
import pytest

from agenthost.agents import ASK_USER, Agent, ChatAgent, ModelBusy, ModelError, ReasoningDelta
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.base import ModelStreamEvent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import calculator
from agenthost.app.settings import Settings
from tests.adapters.orchestrate.agents import add, add_then_say
from tests.adapters.orchestrate.clients import api_key, complete, handoff, stream, user
from tests.adapters.orchestrate.spec import (
    ThinkingStepDetails,
    ThreadMessageDelta,
    ThreadRunStepDelta,
    ToolCallsStepDetails,
    ToolResponseStepDetails,
    steps_of,
    text_of,
)
from tests.conftest import running
from tests.principals import KEYS, SECRET, bearer, transcript_model
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


def _asker(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {last.parts[0].content}."  # type: ignore[union-attr]
    return ["Hello! ", call("ask_user", '{"question": "What is your name?"}')]


def _failing(request: ModelRequest) -> Reply:
    raise ModelBusy("the upstream is busy")


class BreaksAfterThinking(FunctionModel):
    """The adder's model, whose second step reasons, then breaks off as an upstream may."""

    def __init__(self) -> None:
        super().__init__(add_then_say)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        if request.messages[-1].role == "tool":
            yield ReasoningDelta("Checking the sum.")
            raise ModelError("the upstream broke off")
        async for event in super().stream(request):
            yield event


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[httpx.AsyncClient]:
    relay = OpenAIModel("gpt-test", base_url=upstream[1], api_key="k", max_retries=0)
    agents: dict[str, Agent] = {
        "echo": ChatAgent("echo", EchoModel()),
        "t": ChatAgent("t", transcript_model()),
        "adder": ChatAgent("adder", FunctionModel(add_then_say), tools=(add,)),
        "relay": ChatAgent("relay", relay, tools=(calculator,)),
        "failing": ChatAgent("failing", FunctionModel(_failing)),
        "breaking": ChatAgent("breaking", BreaksAfterThinking(), tools=(add,)),
        "asker": ChatAgent("asker", FunctionModel(_asker), tools=(ASK_USER,)),
    }
    settings = Settings(
        adapters=["orchestrate"],  # type: ignore[list-item]
        api_keys=[f"{n}:{k}" for n, k in KEYS.items()],
    )
    async with running(agents, settings) as (_, http):
        http.headers.update(api_key("alice"))
        yield http
    await relay.aclose()


async def test_a_streamed_answer_is_message_deltas_then_done(client: httpx.AsyncClient) -> None:
    thread = str(uuid.uuid4())
    events = await stream(client, "relay", [user("hello there")], thread=thread)
    assert events and all(isinstance(e, ThreadMessageDelta) for e in events)
    assert text_of(events).strip() == "upstream says: hello there"
    assert len(events) > 1  # streamed word by word, as the upstream sent it
    assert {e.thread_id for e in events} == {thread} and {e.model for e in events} == {"relay"}
    assert len({e.id for e in events}) == 1  # one answer message


async def test_a_non_streamed_answer_is_a_chat_completion(client: httpx.AsyncClient) -> None:
    answer = await complete(client, "relay", [user("hello there")])
    assert (
        answer.model == "relay"
        and answer.choices[0].message.content == "upstream says: hello there"
    )
    assert answer.choices[0].finish_reason == "stop"


async def test_the_agents_tool_call_and_result_are_step_details(client: httpx.AsyncClient) -> None:
    events = await stream(client, "adder", [user("add 2 and 3")])
    kinds = [kind for kind, _ in groupby(type(e).__name__ for e in events)]
    assert kinds == ["ThreadMessageDelta", "ThreadRunStepDelta", "ThreadMessageDelta"]
    calls, result = steps_of(events)
    assert isinstance(calls, ToolCallsStepDetails) and isinstance(result, ToolResponseStepDetails)
    (one,) = calls.tool_calls
    assert (one.name, one.args) == ("add", {"a": 2, "b": 3})
    assert (result.tool_call_id, result.name, result.content) == (one.id, "add", "5")
    assert text_of(events) == "Let me add. \n\nThe sum is 5."
    step_ids = [e.id for e in events if isinstance(e, ThreadRunStepDelta)]
    assert len(set(step_ids)) == 2


async def test_a_tool_the_upstream_model_calls_runs_and_shows(client: httpx.AsyncClient) -> None:
    events = await stream(client, "relay", [user("calculate 6*7")])
    calls, result = steps_of(events)
    assert isinstance(calls, ToolCallsStepDetails) and calls.tool_calls[0].name == "calculator"
    assert calls.tool_calls[0].args == {"expression": "6*7"}
    assert isinstance(result, ToolResponseStepDetails) and result.content == "42"
    assert result.tool_call_id == calls.tool_calls[0].id
    assert text_of(events).strip() == "The result is 42."


async def test_a_thread_goes_on_over_two_turns(client: httpx.AsyncClient) -> None:
    thread = str(uuid.uuid4())
    first = await stream(client, "t", [user("my name is Ada")], thread=thread)
    assert text_of(first) == "my name is Ada"
    # Orchestrate sends the thread's transcript; only the turn after the last answer is new.
    transcript = [user("my name is Ada"), {"role": "assistant", "content": text_of(first)}]
    second = await complete(client, "t", [*transcript, user("who am I?")], thread=thread)
    assert second.choices[0].message.content == "my name is Ada | my name is Ada | who am I?"
    # Without a thread a turn is stateless: the transcript sent is the whole input.
    alone = await complete(client, "t", [user("who am I?")])
    assert alone.choices[0].message.content == "who am I?"


async def test_two_keys_on_one_thread_id_have_two_memories(client: httpx.AsyncClient) -> None:
    thread = "shared-looking-thread"
    await stream(client, "t", [user(SECRET)], thread=thread)  # alice, by X-API-Key
    bob = await stream(client, "t", [user("what did I say?")], thread=thread, headers=bearer("bob"))
    assert SECRET not in text_of(bob) and text_of(bob) == "what did I say?"
    alice = await stream(client, "t", [user("and now?")], thread=thread, headers=bearer("alice"))
    assert SECRET in text_of(alice)


async def test_a_trailing_handoff_is_context_not_a_call(client: httpx.AsyncClient) -> None:
    messages = [{"role": "system", "content": "Be brief."}, user("hello"), *handoff("t")]
    answer = await complete(client, "t", messages)
    assert answer.choices[0].message.content == "hello"
    # On a thread too, after an answer of its own, with a handoff earlier in the transcript.
    thread = str(uuid.uuid4())
    first = await stream(client, "t", [user("one"), *handoff("t")], thread=thread)
    transcript = [user("one"), *handoff("t"), {"role": "assistant", "content": text_of(first)}]
    second = await stream(client, "t", [*transcript, user("two"), *handoff("t")], thread=thread)
    assert text_of(second) == "one | one | two"


async def test_a_question_is_asked_in_text_and_the_next_turn_answers_it(
    client: httpx.AsyncClient,
) -> None:
    thread = str(uuid.uuid4())
    first = await stream(client, "asker", [user("hi")], thread=thread)
    assert text_of(first) == "Hello! \n\nWhat is your name?"
    assert not steps_of(first)  # a question, not a tool call to show
    transcript = [user("hi"), {"role": "assistant", "content": text_of(first)}]
    second = await complete(client, "asker", [*transcript, user("Ada")], thread=thread)
    assert second.choices[0].message.content == "Nice to meet you, Ada."
    # Non-streamed, the question is the answer's text too.
    alone = await complete(client, "asker", [user("hi")], thread=str(uuid.uuid4()))
    assert alone.choices[0].message.content == "Hello! \n\nWhat is your name?"


async def test_a_null_stream_is_not_streamed(client: httpx.AsyncClient) -> None:
    body = {"model": "echo", "messages": [user("hi")], "stream": None, "extra_body": None}
    answer = await client.post("/orchestrate/echo/chat/completions", json=body)
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "hi"


async def test_a_failure_before_the_answer_is_the_error_envelope(client: httpx.AsyncClient) -> None:
    url = "/orchestrate/failing/chat/completions"
    response = await client.post(url, json={"messages": [user("hi")]})
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["message"] == "the upstream is busy" and error["code"] == "busy"
    assert error["retryable"] is True


async def test_a_failure_in_a_stream_is_its_last_text(client: httpx.AsyncClient) -> None:
    events = await stream(client, "failing", [user("hi")])
    assert text_of(events).strip() == "Error: the upstream is busy"


async def test_reasoning_before_a_failure_in_a_stream_is_a_step_before_it(
    client: httpx.AsyncClient,
) -> None:
    events = await stream(client, "breaking", [user("add 2 and 3")])
    steps = steps_of(events)
    assert [s.type for s in steps] == ["tool_calls", "tool_response", "thinking"]
    assert isinstance(steps[-1], ThinkingStepDetails)
    assert steps[-1].content == "Checking the sum."
    assert isinstance(events[-1], ThreadMessageDelta)  # the error comes after the thinking
    assert text_of(events).endswith("Error: the upstream broke off")


BAD_BODIES = [
    ({"messages": []}, "messages"),
    ({"model": "echo"}, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages.0.role"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages.0.content"),
    ({"messages": [user("hi")], "stream": "often"}, "stream"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
    ({"messages": [{"role": "system", "content": "only rules"}]}, "nothing new"),
    ([user("hi")], "JSON object"),
]


@pytest.mark.parametrize(("body", "named"), BAD_BODIES)
async def test_a_bad_body_is_a_400_naming_it(
    client: httpx.AsyncClient, body: object, named: str
) -> None:
    response = await client.post("/orchestrate/echo/chat/completions", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert named in error["message"] and error["type"] == "invalid_request_error"


async def test_what_is_not_a_turn_is_refused_in_the_envelope(client: httpx.AsyncClient) -> None:
    url = "/orchestrate/echo/chat/completions"
    not_json = await client.post(url, content=b"{", headers={"content-type": "application/json"})
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "invalid_json"
    text = await client.post(url, content=b"hi", headers={"content-type": "text/plain"})
    assert text.status_code == 415 and text.json()["error"]["message"]
    unknown = await client.post(
        "/orchestrate/nobody/chat/completions", json={"messages": [user("hi")]}
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "agent_not_found"
    route = await client.post("/orchestrate/echo/elsewhere", json={})
    assert route.status_code == 404 and route.json()["error"]["message"]
    method = await client.get(url)
    assert method.status_code == 405 and method.headers["allow"] == "POST"
    anonymous = await client.post(url, json={"messages": [user("hi")]}, headers={"X-API-Key": ""})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["message"]
