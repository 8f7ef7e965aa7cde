"""A pydantic-ai agent (on its own function model) served over /v1 through the entry point."""

from collections.abc import AsyncIterator

import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agenthost.agents import InMemorySession, Message, ToolCallPart, ToolResultPart
from agenthost.agents.frameworks.pydantic_ai import (
    PydanticAIAgent,
    from_pydantic_ai,
    to_pydantic_ai,
)
from agenthost.app.registry import Registry
from tests.completions import complete
from tests.conftest import openai_client

pytestmark = pytest.mark.anyio


def prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(f"heard: {' | '.join(prompts(messages))}")])


async def stream_reply(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "heard: "
    yield " | ".join(prompts(messages))


def registry() -> Registry:
    model = FunctionModel(reply, stream_function=stream_reply)
    served = Registry.with_defaults()
    served.add("pai", PydanticAgent(model, instructions="Be brief."), "A pydantic-ai agent.")
    return served


def test_the_entry_point_registers_the_type() -> None:
    assert isinstance(registry()["pai"], PydanticAIAgent)
    assert registry()["pai"].description == "A pydantic-ai agent."


@pytest.mark.parametrize("stream", [False, True])
async def test_served_over_chat_completions(stream: bool) -> None:
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "heard: first"},
        {"role": "user", "content": "second"},
    ]
    async with openai_client(registry()) as client:
        pieces = await complete(client, "pai", messages, stream=stream)
    assert "".join(pieces) == "heard: first | second"


async def test_a_session_carries_the_conversation_over_responses() -> None:
    async with openai_client(registry()) as client:
        first = await client.responses.create(model="pai", input="one")
        second = await client.responses.create(
            model="pai", input="two", previous_response_id=first.id
        )
        assert second.output_text == "heard: one | two"


async def test_history_converts_both_ways() -> None:
    call = ToolCallPart(id="c1", name="lookup", arguments='{"q":1}')
    ours = [
        Message.system("Be brief."),
        Message.user("hi"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[ToolResultPart(call_id="c1", name="lookup", content="42")]),
        Message.assistant("It is 42."),
    ]
    back = from_pydantic_ai(to_pydantic_ai(ours))
    # System prompts stay with pydantic-ai (its instructions); the rest comes back as it was.
    assert [m.model_dump() for m in back] == [m.model_dump() for m in ours[1:]]
    session = InMemorySession(ours[1:])
    agent = registry()["pai"]
    result = await agent.run("again", session=session)
    assert result.output == "heard: hi | again"
    assert result.usage.input_tokens > 0 and result.usage.requests == 1
    assert [m.text for m in session.messages[-2:]] == ["again", "heard: hi | again"]
