"""Request fields that are not settings or input: relayed to an ``openai:`` upstream or refused.

Never accepted and dropped: each class of field from the table in
``docs/protocols/openai.md``, through the openai SDK, to an agent on the
fake upstream (what it receives is recorded) and to one without an upstream.
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

HI = [{"role": "user", "content": "hi"}]
HARMLESS = {"user": "u-1", "safety_identifier": "s-1", "prompt_cache_key": "k-1"}


@pytest.fixture
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[openai.AsyncOpenAI]:
    _, url = upstream
    relay = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agents: dict[str, Agent] = {
        "relay": ChatAgent("relay", relay),
        "echo": ChatAgent("echo", EchoModel()),
    }
    async with openai_client(agents, max_retries=0) as client:
        yield client
    await relay.aclose()


async def chat(client: openai.AsyncOpenAI, model: str, **fields: Any) -> Any:
    return await client.chat.completions.create(model=model, messages=HI, extra_body=fields)  # type: ignore[arg-type]


async def respond(client: openai.AsyncOpenAI, model: str, **fields: Any) -> Any:
    return await client.responses.create(model=model, input="hi", extra_body=fields)


async def test_harmless_fields_are_relayed_and_accepted_everywhere(
    client: openai.AsyncOpenAI, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    await chat(client, "relay", metadata={"a": "b"}, store=False, service_tier="auto", **HARMLESS)
    sent = fake.requests[-1]
    assert {k: sent.get(k) for k in HARMLESS} == HARMLESS
    assert "metadata" not in sent and "store" not in sent and "service_tier" not in sent
    await respond(client, "relay", **HARMLESS)
    assert {k: fake.requests[-1].get(k) for k in HARMLESS} == HARMLESS
    # A model without an upstream answers as if they were not there (they change no answer).
    answer = await chat(client, "echo", metadata={"a": "b"}, **HARMLESS)
    assert answer.choices[0].message.content == "hi"
    response = await respond(client, "echo", metadata={"a": "b"}, **HARMLESS)
    assert response.metadata == {"a": "b"} and response.safety_identifier == "s-1"


CHAT_RELAYED = {
    "verbosity": "low",
    "logit_bias": {"50256": -100},
    "prediction": {"type": "content", "content": "hi"},
    "service_tier": "flex",
}


@pytest.mark.parametrize(("name", "value"), CHAT_RELAYED.items())
async def test_chat_fields_that_change_answers_reach_the_upstream_or_are_refused(
    client: openai.AsyncOpenAI, upstream: tuple[FakeUpstream, str], name: str, value: Any
) -> None:
    fake, _ = upstream
    await chat(client, "relay", **{name: value})
    assert fake.requests[-1][name] == value
    with pytest.raises(openai.BadRequestError) as caught:
        await chat(client, "echo", **{name: value})
    assert caught.value.param == name and caught.value.code == "unsupported_parameter"


@pytest.mark.parametrize(
    ("fields", "name", "value", "param"),
    [
        ({"text": {"verbosity": "low"}}, "verbosity", "low", "text.verbosity"),
        ({"service_tier": "priority"}, "service_tier", "priority", "service_tier"),
    ],
)
async def test_responses_fields_that_change_answers_reach_the_upstream_or_are_refused(
    client: openai.AsyncOpenAI,
    upstream: tuple[FakeUpstream, str],
    fields: dict[str, Any],
    name: str,
    value: str,
    param: str,
) -> None:
    fake, _ = upstream
    response = await respond(client, "relay", **fields)
    assert fake.requests[-1][name] == value
    shown = response.model_dump()
    assert value in (
        shown["reasoning"]["effort"],
        shown["text"]["verbosity"],
        shown["service_tier"],
    )
    with pytest.raises(openai.BadRequestError) as caught:
        await respond(client, "echo", **fields)
    assert caught.value.param == param


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"store": True}, "store"),
        ({"web_search_options": {}}, "web_search_options"),
        ({"modalities": ["text", "audio"], "audio": {"voice": "alloy"}}, "modalities"),
        ({"audio": {"voice": "alloy", "format": "wav"}}, "audio"),
    ],
)
async def test_chat_fields_no_agent_honours_are_refused(
    client: openai.AsyncOpenAI, fields: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await chat(client, "relay", **fields)
    assert caught.value.param == param


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"truncation": "auto"}, "truncation"),
        ({"max_tool_calls": 3}, "max_tool_calls"),
        ({"include": ["message.output_text.logprobs"]}, "include"),
    ],
)
async def test_responses_fields_no_agent_honours_are_refused(
    client: openai.AsyncOpenAI, fields: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await respond(client, "relay", **fields)
    assert caught.value.param == param


EFFORTS = [
    (chat, {"reasoning_effort": "low"}),
    (chat, {"reasoning": {"effort": "medium"}}),  # OpenRouter's and LiteLLM's object
    (respond, {"reasoning": {"effort": "high", "summary": "auto"}}),
]


@pytest.mark.parametrize(("ask", "fields"), EFFORTS)
async def test_reasoning_effort_reaches_the_upstream_and_other_models_ignore_it(
    client: openai.AsyncOpenAI, upstream: tuple[FakeUpstream, str], ask: Any, fields: Any
) -> None:
    fake, _ = upstream
    effort = fields.get("reasoning_effort") or fields["reasoning"]["effort"]
    await ask(client, "relay", **fields)
    assert fake.requests[-1]["reasoning_effort"] == effort
    assert "reasoning" not in fake.requests[-1]
    # A model that does not reason apart answers as it always does.
    sent = len(fake.requests)
    answer = await ask(client, "echo", **fields)
    text = answer.output_text if ask is respond else answer.choices[0].message.content
    assert text == "hi" and len(fake.requests) == sent
    if ask is respond:  # shown as asked for, as OpenAI shows it
        assert answer.reasoning.effort == effort and answer.reasoning.summary == "auto"


async def test_defaults_and_empty_includes_are_accepted(client: openai.AsyncOpenAI) -> None:
    fields = {"truncation": "disabled", "include": ["reasoning.encrypted_content"]}
    response = await respond(client, "echo", **fields)
    assert response.output_text == "hi"
    answer = await chat(client, "echo", modalities=["text"], store=False, service_tier="default")
    assert answer.choices[0].message.content == "hi"
