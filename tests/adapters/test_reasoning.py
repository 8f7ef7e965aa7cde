"""An upstream's reasoning on the protocols that have a place for it (``/v1`` has its own
module): Anthropic Messages through the anthropic SDK, the AI SDK's and AG-UI's
streams and Orchestrate's steps at the wire level.

The agents relay to the fake upstream's "reasoner" model, which streams
``reasoning_content`` before each answer: "Thinking about <last message>.".
"""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import orjson
import pytest
from ag_ui.core import EventType as E

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from agenthost.app.settings import Settings
from tests.adapters.ag_ui.clients import run, run_input, types
from tests.adapters.ag_ui.clients import user as ag_ui_user
from tests.adapters.anthropic.clients import running as anthropic_running
from tests.adapters.anthropic.clients import sdk
from tests.adapters.orchestrate.clients import stream as orchestrate_stream
from tests.adapters.orchestrate.spec import ThreadRunStepDelta, steps_of, text_of
from tests.conftest import running
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _agents(url: str) -> dict[str, Agent]:
    model = OpenAIModel("reasoner", base_url=url, api_key="k", max_retries=0)
    return {"thinker": ChatAgent("thinker", model, tools=(calculator,))}


@pytest.fixture(scope="module")
async def http(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(adapters=["ai_sdk", "ag_ui", "orchestrate"], playground=False)  # type: ignore[list-item]
    async with running(_agents(upstream[1]), settings) as (_, client):
        yield client


@pytest.fixture(scope="module")
async def claude(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic_running(_agents(upstream[1])) as client:
        yield sdk(client)


ASK: Any = [{"role": "user", "content": "hi"}]
TOOL_ASK: Any = [{"role": "user", "content": "calculate 2+3"}]


async def test_messages_show_thinking_blocks_before_the_text(
    claude: anthropic.AsyncAnthropic,
) -> None:
    message = await claude.messages.create(model="thinker", max_tokens=100, messages=ASK)
    thinking, text = message.content
    assert thinking.type == "thinking" and thinking.thinking == "Thinking about hi."
    assert thinking.signature == ""  # nothing here verifies a block sent back
    assert text.type == "text" and text.text == "upstream says: hi"
    # Sent back, as Claude Code sends a conversation, a thinking block is accepted.
    again = [*ASK, {"role": "assistant", "content": message.content}, *ASK]
    answer = await claude.messages.create(model="thinker", max_tokens=100, messages=again)
    assert answer.content[-1].type == "text"


async def test_a_streamed_message_has_thinking_deltas_in_a_thinking_block(
    claude: anthropic.AsyncAnthropic,
) -> None:
    thought = ""
    starts: list[str] = []
    async with claude.messages.stream(model="thinker", max_tokens=100, messages=ASK) as stream:
        async for event in stream:
            if event.type == "content_block_start":
                starts.append(event.content_block.type)
            elif event.type == "thinking":
                thought += event.thinking
        final = await stream.get_final_message()
    assert starts == ["thinking", "text"]
    assert thought.strip() == "Thinking about hi."
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == thought  # type: ignore[union-attr]


async def test_each_steps_reasoning_is_its_own_thinking_block(
    claude: anthropic.AsyncAnthropic,
) -> None:
    async with claude.messages.stream(model="thinker", max_tokens=100, messages=TOOL_ASK) as stream:
        final = await stream.get_final_message()
    kinds = [b.type for b in final.content]
    assert kinds == ["thinking", "thinking", "text"]  # the call's step, then the answer's
    assert final.content[1].thinking.strip() == "Thinking about 5."  # type: ignore[union-attr]
    whole = await claude.messages.create(model="thinker", max_tokens=100, messages=TOOL_ASK)
    thinking = whole.content[0]
    assert thinking.type == "thinking"
    assert thinking.thinking == "Thinking about calculate 2+3.\n\nThinking about 5."
    assert whole.content[1].type == "text" and whole.content[1].text == "The result is 5."


async def _ai_sdk(http: httpx.AsyncClient, text: str) -> list[Any]:
    message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}
    body = {"id": "chat-1", "messages": [message], "trigger": "submit-message"}
    answer = await http.post("/ai-sdk/thinker", json=body)
    assert answer.status_code == 200, answer.text
    lines = [line.removeprefix("data: ") for line in answer.text.split("\n\n") if line]
    assert lines[-1] == "[DONE]"
    return [orjson.loads(line) for line in lines[:-1]]


async def test_the_ai_sdk_stream_has_a_reasoning_part_before_the_text(
    http: httpx.AsyncClient,
) -> None:
    chunks = await _ai_sdk(http, "hi")
    kinds = [c["type"] for c in chunks if not c["type"].endswith("-delta")]
    assert kinds == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-end",
        "text-start",
        "text-end",
        "finish-step",
        "finish",
    ]
    thought = "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta")
    assert thought.strip() == "Thinking about hi."
    ids = {c["id"] for c in chunks if c["type"].startswith("reasoning-")}
    assert len(ids) == 1
    usage = chunks[-1]["messageMetadata"]["usage"]
    assert usage["outputTokenDetails"] == {
        "textTokens": usage["outputTokens"] - 3,
        "reasoningTokens": 3,  # "Thinking about hi.": a word a token
    }


async def test_the_ai_sdk_stream_closes_reasoning_before_a_tool_step(
    http: httpx.AsyncClient,
) -> None:
    chunks = await _ai_sdk(http, "calculate 2+3")
    kinds = [c["type"] for c in chunks if not c["type"].endswith("-delta")]
    assert kinds == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-end",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "reasoning-start",
        "reasoning-end",
        "text-start",
        "text-end",
        "finish-step",
        "finish",
    ]
    # Both model calls' reasoning tokens: "Thinking about calculate 2+3.", "Thinking about 5.".
    usage = chunks[-1]["messageMetadata"]["usage"]
    assert usage["outputTokenDetails"]["reasoningTokens"] == 4 + 3


async def test_ag_ui_streams_reasoning_events_and_takes_them_back(
    http: httpx.AsyncClient,
) -> None:
    body = run_input([ag_ui_user("hi")])
    events = await run(http, "ag-ui/thinker", body)
    order = [t for t in types(events) if t not in (E.REASONING_MESSAGE_CONTENT,)]
    assert order[:6] == [
        E.RUN_STARTED,
        E.REASONING_START,
        E.REASONING_MESSAGE_START,
        E.REASONING_MESSAGE_END,
        E.REASONING_END,
        E.TEXT_MESSAGE_START,
    ]
    thought = "".join(
        e.delta  # type: ignore[attr-defined]
        for e in events
        if e.type == E.REASONING_MESSAGE_CONTENT
    )
    assert thought.strip() == "Thinking about hi."
    start = next(e for e in events if e.type == E.REASONING_MESSAGE_START)
    assert start.role == "reasoning"  # type: ignore[attr-defined]
    finished = events[-1]
    assert finished.type == E.RUN_FINISHED
    assert [u.reasoning_tokens for u in finished.usage or ()] == [3]  # type: ignore[attr-defined]
    # The UI sends the reasoning message back with the thread: skipped, never refused.
    reasoning = {"id": start.message_id, "role": "reasoning", "content": thought}  # type: ignore[attr-defined]
    answer = {"id": "a1", "role": "assistant", "content": "upstream says: hi"}
    again = run_input([ag_ui_user("hi"), reasoning, answer, ag_ui_user("more")])
    events = await run(http, "ag-ui/thinker", again)
    assert types(events)[-1] == E.RUN_FINISHED


async def test_orchestrate_shows_each_stretch_of_reasoning_as_a_thinking_step(
    http: httpx.AsyncClient,
) -> None:
    events = await orchestrate_stream(http, "thinker", TOOL_ASK)
    kinds = [steps_of([e])[0].type if isinstance(e, ThreadRunStepDelta) else "text" for e in events]
    assert kinds[:4] == ["thinking", "tool_calls", "tool_response", "thinking"]
    assert set(kinds[4:]) == {"text"}
    thoughts = [step.content for step in steps_of(events) if step.type == "thinking"]
    assert thoughts == ["Thinking about calculate 2+3.", "Thinking about 5."]
    assert text_of(events).strip() == "The result is 5."
