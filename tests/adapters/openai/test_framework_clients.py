"""Clients people put in front of agenthost: LiteLLM (library) and pydantic-ai.

The agent relays to the fake upstream, which calls the client's tools when
asked ("use NAME with JSON"). pydantic-ai's default structured output is a
tool call (``final_result``): it works only if client tools do.
"""

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import running
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture
async def relay(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[ChatAgent]:
    model = OpenAIModel("gpt-test", base_url=upstream[1], api_key="k", max_retries=0)
    yield ChatAgent("relay", model)
    await model.aclose()


class City(BaseModel):
    city: str
    country: str


async def test_pydantic_ai_tools_and_structured_output(relay: ChatAgent) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async with running({"relay": relay}) as (_, http):
        client = AsyncOpenAI(base_url="http://localhost/v1", api_key="k", http_client=http)
        model = OpenAIChatModel("relay", provider=OpenAIProvider(openai_client=client))
        structured = Agent(model, output_type=City)
        result = await structured.run(
            'use final_result with {"city": "Paris", "country": "France"}'
        )
        assert result.output == City(city="Paris", country="France")

        tooled = Agent(model)
        seen: list[str] = []

        @tooled.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            seen.append(city)
            return "sunny"

        answer = await tooled.run('use get_weather with {"city": "Lyon"}')
        assert seen == ["Lyon"]
        assert answer.output.strip() == "The result is sunny."


@pytest.mark.slow
async def test_litellm_tool_round_trip_over_http(relay: ChatAgent) -> None:
    # LiteLLM fetches a price list from GitHub at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    app = create_app(Settings(), {"relay": relay})
    with serve_in_thread(app, lifespan=True) as url:
        common: dict[str, Any] = {
            "model": "openai/relay",
            "api_base": f"{url}/v1",
            "api_key": "unused",
            "tools": [WEATHER],
        }
        messages: list[Any] = [{"role": "user", "content": 'use get_weather with {"city": "Oslo"}'}]
        first = await litellm.acompletion(messages=messages, **common)
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        (call,) = choice.message.tool_calls
        assert call.function.name == "get_weather"
        messages += [
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "snow"},
        ]
        stream = await litellm.acompletion(messages=messages, stream=True, **common)
        chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text.strip() == "The result is snow."
