"""A Google ADK agent served through the entry point, its model (ADK's LiteLLM
wrapper) on a real HTTP fake upstream."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import anyio
import pytest

# LiteLLM fetches a price list from GitHub at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from google.adk.agents import BaseAgent as ADKBaseAgent
from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models.lite_llm import LiteLlm
from google.genai import types

from agenthost.agents import Message, ToolCallFinished, ToolCallStarted
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks.adk import ADKAgent, from_event, to_events
from agenthost.agents.messages import ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, TextDelta
from agenthost.agents.sessions import Session
from agenthost.app.registry import Registry
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

PROMPT = 'use shout with {"text": "two sdks"}'


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class Greeter(ADKBaseAgent):
    """An ADK agent that calls no model: it answers with two whole events."""

    async def _run_async_impl(self, ctx: InvocationContext):  # type: ignore[no-untyped-def, override]
        said = ctx.user_content.parts[0].text if ctx.user_content else ""
        for text in (f"hello, {said}", "bye"):
            content = types.Content(role="model", parts=[types.Part(text=text)])
            yield Event(author=self.name, invocation_id=ctx.invocation_id, content=content)


class ListSession(Session):
    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def load(self) -> list[Message]:
        return list(self.messages)

    async def append(self, messages: Sequence[Message]) -> None:
        self.messages += messages


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


def model(url: str, name: str = "any") -> LiteLlm:
    return LiteLlm(model=f"openai/{name}", api_base=url, api_key="test")


@pytest.fixture
def registry(fake: tuple[FakeUpstream, str]) -> Registry:
    _, url = fake
    agent = LlmAgent(name="shouter", model=model(url), instruction="Shout.", tools=[shout])
    served = Registry.with_defaults()
    served.add("adk", agent, "An ADK agent.")
    return served


async def test_the_entry_point_registers_the_base_class(registry: Registry) -> None:
    agent = registry["adk"]
    assert isinstance(agent, ADKAgent)
    assert agent.description == "An ADK agent."


async def test_a_stream_shows_text_tool_calls_and_usage(registry: Registry) -> None:
    updates = [u async for u in registry["adk"].run_stream(PROMPT)]
    (started,) = [u.call for u in updates if isinstance(u, ToolCallStarted)]
    (finished,) = [u.result for u in updates if isinstance(u, ToolCallFinished)]
    assert started.name == "shout" and started.arguments == '{"text":"two sdks"}'
    assert finished.call_id == started.id and finished.content == "TWO SDKS"
    deltas = [u.text for u in updates if isinstance(u, TextDelta)]
    assert len(deltas) > 1  # word by word, as the fake streams it
    final = updates[-1]
    assert isinstance(final, RunFinished)
    assert final.result.output == "".join(deltas) == 'The result is {"result": "TWO SDKS"}. '
    roles = [m.role for m in final.result.new_messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert final.result.usage.requests == 2 and final.result.usage.input_tokens > 0


async def test_history_continues_per_session_and_never_across(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    upstream, _ = fake
    agent = registry["adk"]
    first, second = ListSession(), ListSession()
    await agent.run("my name is Ada", session=first)
    result = await agent.run("what is my name?", session=first)
    assert result.output.strip() == "upstream says: what is my name?"
    sent = [m.get("content") for m in upstream.requests[-1]["messages"]]
    assert "my name is Ada" in sent and "upstream says: my name is Ada" in " ".join(map(str, sent))
    await agent.run("who am I?", session=second)
    sent = [str(m.get("content")) for m in upstream.requests[-1]["messages"]]
    assert not any("Ada" in text for text in sent)
    assert len(first.messages) == 4 and len(second.messages) == 2


async def test_a_chat_transcript_and_instructions_reach_the_model(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    upstream, _ = fake
    transcript = [
        Message.system("Be brief."),
        Message.user("first"),
        Message.assistant("answer one"),
        Message.user("second"),
    ]
    options = RunOptions(instructions="Say {nothing}.")  # braces: no ADK state template
    result = await registry["adk"].run(transcript, options=options)
    assert result.output.strip() == "upstream says: second"
    system, *rest = upstream.requests[-1]["messages"]
    assert system["role"] == "system"
    assert "Shout." in system["content"] and "Be brief." in system["content"]
    assert "Say {nothing}." in system["content"]
    assert [(m["role"], m["content"]) for m in rest] == [
        ("user", "first"),
        ("assistant", "answer one"),
        ("user", "second"),
    ]


async def test_an_agent_that_calls_no_model_streams_its_whole_events() -> None:
    agent = ADKAgent("greeter", Greeter(name="greeter"))
    updates = [u async for u in agent.run_stream("sea")]
    text = "".join(u.text for u in updates if isinstance(u, TextDelta))
    final = updates[-1]
    assert isinstance(final, RunFinished)
    assert text == final.result.output == "hello, sea\n\nbye"


async def test_a_run_needs_a_user_message_last(registry: Registry) -> None:
    with pytest.raises(UserError):
        await registry["adk"].run([Message.user("hi"), Message.assistant("hello")])


async def test_closing_the_stream_closes_the_upstream_stream(
    fake: tuple[FakeUpstream, str],
) -> None:
    upstream, url = fake
    agent = ADKAgent("slow", LlmAgent(name="slow", model=model(url, "slow")))
    before = upstream.abandoned
    async with agent.lifespan():
        stream = agent.run_stream("take your time")
        assert isinstance(await anext(stream), TextDelta)
        await stream.aclose()
    for _ in range(600):  # up to 30 s on a loaded machine
        if upstream.abandoned > before:
            break
        await anyio.sleep(0.05)
    assert upstream.abandoned == before + 1, "the upstream stream was not closed"


def test_conversions_round_trip_tool_calls() -> None:
    call = ToolCallPart(id="c1", name="shout", arguments='{"text":"a"}')
    result = ToolResultPart(call_id="c1", name="shout", content="A")
    messages = [
        Message.user("hi"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
        Message.assistant("done"),
    ]
    events = to_events(messages, "shouter")
    assert [e.author for e in events] == ["user", "shouter", "shouter", "shouter"]
    back = [m for e in events[1:] for m in from_event(e)]
    assert back == messages[1:]
