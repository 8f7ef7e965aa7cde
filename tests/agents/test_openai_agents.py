"""An OpenAI Agents SDK agent (its ``agents`` package beside ``agenthost``) served
through the entry point, on a real HTTP fake upstream."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import openai
import pytest

from agenthost.agents import ToolCallFinished, ToolCallStarted
from agenthost.agents.frameworks.openai_agents import OpenAIAgentsAgent
from agenthost.agents.results import RunFinished, TextDelta
from agenthost.app.registry import Registry
from agents import Agent as SDKAgent
from agents import OpenAIChatCompletionsModel, function_tool
from tests.conftest import openai_client
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

PROMPT = 'use shout with {"text": "two sdks"}'


@function_tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    # The SDK would export traces to OpenAI's platform; a host's tests send nothing out.
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    with serve_in_thread(FakeUpstream().app) as url:
        yield url


@pytest.fixture
async def registry(upstream: str) -> AsyncIterator[Registry]:
    client = openai.AsyncOpenAI(base_url=f"{upstream}/v1", api_key="test")
    model = OpenAIChatCompletionsModel(model="any", openai_client=client)
    agent = SDKAgent(name="sdk", instructions="Shout.", model=model, tools=[shout])
    served = Registry.with_defaults()
    served.add("sdk", agent, "An OpenAI Agents SDK agent.")
    yield served
    await client.close()


async def test_the_entry_point_registers_the_type(registry: Registry) -> None:
    agent = registry["sdk"]
    assert isinstance(agent, OpenAIAgentsAgent)
    assert agent.description == "An OpenAI Agents SDK agent."


async def test_a_stream_shows_text_and_tool_calls(registry: Registry) -> None:
    updates = [u async for u in registry["sdk"].run_stream(PROMPT)]
    (started,) = [u.call for u in updates if isinstance(u, ToolCallStarted)]
    (finished,) = [u.result for u in updates if isinstance(u, ToolCallFinished)]
    assert started.name == "shout" and finished.call_id == started.id
    assert finished.content == "TWO SDKS"
    text = "".join(u.text for u in updates if isinstance(u, TextDelta))
    assert text.strip() == "The result is TWO SDKS."  # the fake streams word by word
    final = updates[-1]
    assert isinstance(final, RunFinished) and final.result.output == text
    roles = [m.role for m in final.result.new_messages]
    assert roles == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("stream", [False, True])
async def test_served_over_chat_completions(registry: Registry, stream: bool) -> None:
    async with openai_client(registry) as client:
        messages = [{"role": "user", "content": PROMPT}]
        if stream:
            chunks = await client.chat.completions.create(
                model="sdk", messages=messages, stream=True
            )
            text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
        else:
            reply = await client.chat.completions.create(model="sdk", messages=messages)
            text = reply.choices[0].message.content or ""
    assert text.strip() == "The result is TWO SDKS."
