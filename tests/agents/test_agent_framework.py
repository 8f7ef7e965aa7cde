"""A Microsoft Agent Framework agent served through the entry point, on a real HTTP fake
upstream reached by the framework's own OpenAI Chat Completions client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import openai
import pytest
from agent_framework import Agent, tool
from agent_framework.openai import OpenAIChatCompletionClient

from agenthost.agents import InMemorySession, ToolCallFinished, ToolCallStarted
from agenthost.agents.frameworks.agent_framework import (
    AgentFrameworkAgent,
    from_agent_framework,
    to_agent_framework,
)
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, TextDelta
from agenthost.app.registry import Registry
from tests.conftest import openai_client
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

PROMPT = 'use shout with {"text": "two frameworks"}'


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


def build(client: openai.AsyncOpenAI, model: str = "any") -> Agent:
    chat = OpenAIChatCompletionClient(model=model, async_client=client)
    return Agent(client=chat, name="maf", instructions="Shout.", tools=[shout])


@pytest.fixture
async def registry(fake: tuple[FakeUpstream, str]) -> AsyncIterator[Registry]:
    # The test's own SDK client, closed on this test's event loop.
    client = openai.AsyncOpenAI(base_url=fake[1], api_key="test-key")
    served = Registry.with_defaults()
    served.add("maf", build(client), "An Agent Framework agent.")
    served.add("slow", build(client, "slow"), "")
    yield served
    await client.close()


async def test_the_entry_point_registers_the_type(registry: Registry) -> None:
    agent = registry["maf"]
    assert isinstance(agent, AgentFrameworkAgent)
    assert agent.description == "An Agent Framework agent."


async def test_a_stream_shows_text_tool_calls_and_usage(registry: Registry) -> None:
    updates = [u async for u in registry["maf"].run_stream(PROMPT)]
    (started,) = [u.call for u in updates if isinstance(u, ToolCallStarted)]
    (finished,) = [u.result for u in updates if isinstance(u, ToolCallFinished)]
    assert started.name == "shout" and started.arguments == '{"text": "two frameworks"}'
    assert finished.call_id == started.id and finished.content == "TWO FRAMEWORKS"
    assert finished.name == "shout"
    assert updates.index(ToolCallStarted(started)) < updates.index(ToolCallFinished(finished))
    deltas = [u.text for u in updates if isinstance(u, TextDelta)]
    assert len(deltas) > 1  # the fake streams word by word
    final = updates[-1]
    assert isinstance(final, RunFinished)
    assert final.result.output == "".join(deltas) == "The result is TWO FRAMEWORKS. "
    assert [m.role for m in final.result.new_messages] == ["user", "assistant", "tool", "assistant"]
    usage = final.result.usage
    assert usage.requests == 2 and usage.input_tokens > 0 and usage.output_tokens > 0


async def test_a_plain_run_gives_the_same_result(registry: Registry) -> None:
    result = await registry["maf"].run(PROMPT)
    assert result.output == "The result is TWO FRAMEWORKS. "
    assert result.usage.requests == 2


async def test_the_session_continues_and_is_never_shared(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    agent = registry["maf"]
    first, other = InMemorySession(), InMemorySession()
    await agent.run("my name is Ada", session=first)
    await agent.run("I am Bob", session=other)
    await agent.run("who am I?", session=first)
    sent = [m.get("content") for m in fake[0].requests[-1]["messages"]]
    assert sent == ["Shout.", "my name is Ada", "upstream says: my name is Ada ", "who am I?"]
    assert len(first.messages) == 4 and len(other.messages) == 2


async def test_instructions_of_the_run_reach_the_model(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    await registry["maf"].run("hi", options=RunOptions(instructions="Whisper."))
    system = [m["content"] for m in fake[0].requests[-1]["messages"] if m["role"] == "system"]
    assert "Whisper." in " ".join(system)


async def test_closing_the_stream_closes_the_upstream_stream(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    before = fake[0].abandoned
    updates = registry["slow"].run_stream("talk for long")
    first = await anext(updates)
    assert isinstance(first, TextDelta)
    await updates.aclose()
    with anyio.fail_after(30):
        while fake[0].abandoned == before:  # noqa: ASYNC110 (set in the fake's thread)
            await anyio.sleep(0.02)


async def test_served_over_chat_completions(registry: Registry) -> None:
    async with openai_client(registry) as client:
        chunks = await client.chat.completions.create(
            model="maf", messages=[{"role": "user", "content": PROMPT}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
    assert text.strip() == "The result is TWO FRAMEWORKS."


def test_messages_round_trip() -> None:
    call = ToolCallPart(id="c1", name="shout", arguments='{"text": "a"}')
    messages = [
        Message.system("Be brief."),
        Message.user("hi"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[ToolResultPart(call_id="c1", name="shout", content="A")]),
        Message.assistant("A it is."),
    ]
    back = from_agent_framework(to_agent_framework(messages))
    assert [m.role for m in back] == ["system", "user", "assistant", "tool", "assistant"]
    assert back[2].tool_calls == [call]
    assert back[3].parts == [ToolResultPart(call_id="c1", name="shout", content="A")]
    assert back[4].text == "A it is."
