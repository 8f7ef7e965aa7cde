"""A BeeAI Framework agent served through the entry point, on a real HTTP fake upstream
reached by BeeAI's own OpenAI chat model (LiteLLM)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import anyio
import pytest
from beeai_framework.adapters.openai import OpenAIChatModel
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.agents.requirement.prompts import RequirementAgentTaskPromptInput
from beeai_framework.backend import ChatModelParameters
from beeai_framework.template import PromptTemplate
from beeai_framework.tools import tool

from agenthost.agents import InMemorySession, ToolCallFinished, ToolCallStarted
from agenthost.agents.frameworks.beeai import BeeAIAgent, from_beeai, to_beeai
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.results import RunFinished, TextDelta
from agenthost.app.registry import Registry
from tests.conftest import openai_client
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [
    pytest.mark.anyio,
    # LiteLLM (under BeeAI's OpenAI model) warns through pydantic as it runs.
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211"),
]

PROMPT = 'use shout with {"text": "busy bees"}'


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def build(url: str, model: str = "any") -> RequirementAgent:
    """A RequirementAgent for the fake upstream.

    The fake answers in text and calls a tool only when the prompt starts with
    "use": so the prompt goes as it is (BeeAI's task template prefixes and
    HTML-escapes it), the answer comes as text (``final_answer_as_tool=False``)
    and ``tool_choice`` stays ``auto``.
    """
    llm = OpenAIChatModel(
        model,
        base_url=url,
        api_key="test-key",
        parameters=ChatModelParameters(stream=True),
        tool_choice_support={"none", "single", "auto"},
    )
    task = PromptTemplate(schema=RequirementAgentTaskPromptInput, template="{{&prompt}}")
    return RequirementAgent(
        llm=llm,
        tools=[shout],
        name="bee",
        description="A BeeAI agent.",
        final_answer_as_tool=False,
        templates={"task": task},
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


@pytest.fixture(scope="module")
def registry(fake: tuple[FakeUpstream, str]) -> Registry:
    served = Registry.with_defaults()
    served.add("bee", build(fake[1]))
    served.add("slow", build(fake[1], "slow"))
    return served


async def test_the_entry_point_registers_the_type(registry: Registry) -> None:
    agent = registry["bee"]
    assert isinstance(agent, BeeAIAgent)
    assert agent.description == "A BeeAI agent."


async def test_a_stream_shows_text_tool_calls_and_usage(registry: Registry) -> None:
    updates = [u async for u in registry["bee"].run_stream(PROMPT)]
    (started,) = [u.call for u in updates if isinstance(u, ToolCallStarted)]
    (finished,) = [u.result for u in updates if isinstance(u, ToolCallFinished)]
    assert started.name == "shout" and started.arguments == '{"text": "busy bees"}'
    assert finished.call_id == started.id and finished.content == "BUSY BEES"
    assert updates.index(ToolCallStarted(started)) < updates.index(ToolCallFinished(finished))
    text = "".join(u.text for u in updates if isinstance(u, TextDelta))
    final = updates[-1]
    assert isinstance(final, RunFinished)
    assert final.result.output == text and text.strip() == "The result is BUSY BEES."
    assert [m.role for m in final.result.new_messages] == ["user", "assistant", "tool", "assistant"]
    usage = final.result.usage
    assert usage.requests == 2 and usage.input_tokens > 0 and usage.output_tokens > 0


async def test_the_session_continues_and_is_never_shared(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    agent = registry["bee"]
    first, other = InMemorySession(), InMemorySession()
    await agent.run("my name is Ada", session=first)
    await agent.run("I am Bob", session=other)
    await agent.run("who am I?", session=first)
    sent = [m for m in fake[0].requests[-1]["messages"] if m["role"] != "system"]
    texts = [str(m["content"]) for m in sent]
    assert "my name is Ada" in texts[0] and "I am Bob" not in " ".join(texts)
    assert "upstream says: my name is Ada" in texts[1] and "who am I?" in texts[2]
    assert len(first.messages) == 4 and len(other.messages) == 2
    assert len(build("http://unused/v1").memory.messages) == 0  # nothing kept on the agent


async def test_two_runs_of_one_agent_at_once(registry: Registry) -> None:
    # A BeeAI agent refuses a second run while one is going: each run has its own clone.
    results: list[str] = []

    async def ask(text: str) -> None:
        results.append((await registry["bee"].run(text)).output)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask, "one")
        tasks.start_soon(ask, "two")
    assert sorted(r.strip() for r in results) == ["upstream says: one", "upstream says: two"]


async def test_closing_the_stream_closes_the_upstream_stream(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    # The answer comes at the end (text mode): close the run once the model streams.
    before, started = fake[0].abandoned, fake[0].slow_started
    updates = registry["slow"].run_stream("talk for long")
    first = asyncio.ensure_future(anext(updates))
    with anyio.fail_after(30):
        while fake[0].slow_started == started:  # noqa: ASYNC110 (set in the fake's thread)
            await anyio.sleep(0.02)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await updates.aclose()
    # LiteLLM does not close a stream it is cancelled in: its stream sits in a
    # reference cycle, and the connection closes when that is collected.
    with anyio.fail_after(30):
        while fake[0].abandoned == before:
            gc.collect()
            await anyio.sleep(0.02)


async def test_served_over_chat_completions(registry: Registry) -> None:
    async with openai_client(registry) as client:
        chunks = await client.chat.completions.create(
            model="bee", messages=[{"role": "user", "content": PROMPT}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
    assert text.strip() == "The result is BUSY BEES."


def test_messages_convert_both_ways() -> None:
    call = ToolCallPart(id="c1", name="shout", arguments='{"text": "a"}')
    result = ToolResultPart(call_id="c1", name="shout", content="A")
    messages = [
        Message.system("Be brief."),
        Message.user("hi"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
        Message.assistant("A it is."),
    ]
    converted = to_beeai(messages)
    assert [m.role for m in converted] == ["system", "user", "assistant", "tool", "assistant"]
    assert converted[4].text == "A it is."
    back = from_beeai(converted)  # only the tool exchange comes back: the answer is the output
    assert back == [messages[2], messages[3]]
