"""An upstream's reasoning on /v1: ``reasoning_content`` on Chat, reasoning items on Responses.

The fake upstream's "reasoner" models reason before they answer (vLLM's and
DeepSeek's ``reasoning_content``, Ollama's ``reasoning``); the openai SDK reads
what the app makes of it, every answer checked against OpenAI's schemas.
"""

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from tests.adapters.openai.clients import openai_client
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

THOUGHT = "Thinking about hi."


@pytest.fixture
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[openai.AsyncOpenAI]:
    _, url = upstream
    models = [
        OpenAIModel(name, base_url=url, api_key="k", max_retries=0)
        for name in ("reasoner", "reasoner-ollama", "gpt-test")
    ]
    agents: dict[str, Agent] = {
        "thinker": ChatAgent("thinker", models[0]),
        "ollama": ChatAgent("ollama", models[1]),
        "plain": ChatAgent("plain", models[2]),
        "echo": ChatAgent("echo", EchoModel()),
    }
    async with openai_client(agents, max_retries=0) as client:
        yield client
    for model in models:
        await model.aclose()


@pytest.mark.parametrize("agent", ["thinker", "ollama"])
async def test_chat_shows_the_reasoning_on_the_message_and_in_the_deltas(
    client: openai.AsyncOpenAI, agent: str
) -> None:
    answer = await client.chat.completions.create(
        model=agent, messages=[{"role": "user", "content": "hi"}]
    )
    message = answer.choices[0].message
    assert message.content == "upstream says: hi"
    assert (message.model_extra or {})["reasoning_content"].strip() == THOUGHT

    stream = await client.chat.completions.create(
        model=agent, messages=[{"role": "user", "content": "hi"}], stream=True
    )
    order: list[str] = []  # which kind each delta was, in order
    thought, text = "", ""
    async for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is None:
            continue
        if reasoning := (delta.model_extra or {}).get("reasoning_content"):
            thought += reasoning
            order.append("reasoning")
        if delta.content:
            text += delta.content
            order.append("text")
    assert thought.strip() == THOUGHT and text.strip() == "upstream says: hi"
    assert order == sorted(order)  # every piece of reasoning before the answer


async def test_chat_without_reasoning_has_no_reasoning_content(
    client: openai.AsyncOpenAI,
) -> None:
    answer = await client.chat.completions.create(
        model="plain", messages=[{"role": "user", "content": "hi"}]
    )
    assert "reasoning_content" not in (answer.choices[0].message.model_extra or {})


async def test_responses_output_a_reasoning_item_with_the_raw_reasoning_text(
    client: openai.AsyncOpenAI,
) -> None:
    response = await client.responses.create(
        model="thinker", input="hi", reasoning={"effort": "low", "summary": "auto"}
    )
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and message.type == "message"
    assert reasoning.summary == []  # raw thought, not a summary (see responses_stream.py)
    assert [c.text.strip() for c in reasoning.content or ()] == [THOUGHT]
    assert response.output_text == "upstream says: hi"
    stored = await client.responses.retrieve(response.id)
    assert stored.output[0].id == reasoning.id


async def test_streamed_responses_stream_the_reasoning_item_before_the_answer(
    client: openai.AsyncOpenAI,
) -> None:
    types: list[str] = []
    thought = ""
    async with client.responses.stream(model="thinker", input="hi") as stream:
        async for event in stream:
            types.append(event.type)
            if event.type == "response.reasoning_text.delta":
                thought += event.delta
        final = await stream.get_final_response()
    assert thought.strip() == THOUGHT
    first_text = types.index("response.output_text.delta")
    assert types.index("response.reasoning_text.delta") < first_text
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert {"response.reasoning_text.done", "response.content_part.done"} <= set(types)
    reasoning = final.output[0]
    assert reasoning.type == "reasoning" and reasoning.status == "completed"
    assert (reasoning.content or [])[0].text == thought
    assert final.output_text.strip() == "upstream says: hi"  # streamed word by word


async def test_reasoning_items_sent_back_are_kept_from_the_model(
    client: openai.AsyncOpenAI, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    first = await client.responses.create(model="thinker", input="hi", store=False)
    items: list[Any] = [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"role": "user", "content": "and now?"})
    second = await client.responses.create(model="thinker", input=items, store=False)
    assert second.output_text == "upstream says: and now?"
    sent = fake.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["assistant", "user"]  # the output, then the turn
    assert not any("reasoning" in str(m) or "Thinking" in str(m) for m in sent)
    with pytest.raises(openai.BadRequestError) as caught:
        bad = {"type": "reasoning", "summary": [], "content": "thought"}
        await client.responses.create(model="thinker", input=[bad, *items[-1:]])
    assert caught.value.param == "input[0].content"


async def test_models_that_do_not_reason_output_no_reasoning_item(
    client: openai.AsyncOpenAI,
) -> None:
    for agent in ("echo", "plain"):
        response = await client.responses.create(
            model=agent, input="hi", reasoning={"effort": "high", "summary": "detailed"}
        )
        assert [item.type for item in response.output] == ["message"]


REASONED = len(THOUGHT.split())
"""The reasoning tokens the fake "reasoner" counts for "hi": a word a token."""


async def test_chat_usage_carries_the_upstreams_reasoning_tokens(
    client: openai.AsyncOpenAI,
) -> None:
    ask: Any = [{"role": "user", "content": "hi"}]
    answer = await client.chat.completions.create(model="thinker", messages=ask)
    usage = answer.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == REASONED
    assert usage.completion_tokens == REASONED + 3  # "upstream says: hi"

    stream = await client.chat.completions.create(
        model="thinker", messages=ask, stream=True, stream_options={"include_usage": True}
    )
    last = [chunk async for chunk in stream][-1]
    assert last.usage is not None and last.usage.completion_tokens_details is not None
    assert last.usage.completion_tokens_details.reasoning_tokens == REASONED

    # Ollama counts no reasoning tokens: no details, as an upstream without them sends.
    plain = await client.chat.completions.create(model="ollama", messages=ask)
    assert plain.usage is not None and plain.usage.completion_tokens_details is None


async def test_responses_usage_carries_the_reasoning_tokens_also_when_stored(
    client: openai.AsyncOpenAI,
) -> None:
    response = await client.responses.create(model="thinker", input="hi")
    assert response.usage is not None
    assert response.usage.output_tokens_details.reasoning_tokens == REASONED
    async with client.responses.stream(model="thinker", input="hi") as stream:
        streamed = await stream.get_final_response()
    assert streamed.usage is not None
    assert streamed.usage.output_tokens_details.reasoning_tokens == REASONED
    stored = await client.responses.retrieve(response.id)
    assert stored.usage is not None
    assert stored.usage.output_tokens_details.reasoning_tokens == REASONED
    # A response without reasoning is stored as before (two counts) and reads 0.
    plain = await client.responses.create(model="plain", input="hi")
    again = await client.responses.retrieve(plain.id)
    assert again.usage is not None and again.usage.output_tokens_details.reasoning_tokens == 0
    assert again.usage.output_tokens == plain.usage.output_tokens > 0  # type: ignore[union-attr]
