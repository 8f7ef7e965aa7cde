"""A conversation longer than the local model's context keeps working on a token budget."""

import anyio
import pytest

from agenthost.agents import ChatAgent, InMemorySession, Message, ModelSettings
from agenthost.agents.history import TokenBudget
from agenthost.agents.models import ModelRequest
from agenthost.agents.models.local import LocalModel

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONTEXT = 256


async def test_token_budget_holds_a_conversation_longer_than_the_context() -> None:
    model = LocalModel("smollm2", context_size=CONTEXT, parallel=1)
    # Greedy and short: the budget leaves the rest of the context for the answer.
    settings = ModelSettings(max_tokens=20, temperature=0, seed=7)
    agent = ChatAgent(
        "small",
        model,
        instructions="Answer in one short sentence.",
        model_settings=settings,
        memory=TokenBudget(CONTEXT, threshold=0.7),
    )
    session = InMemorySession()
    topics = ["cats", "the sea", "mountains", "bread", "trains", "rain", "music"]
    with anyio.fail_after(120):
        async with agent.lifespan():
            # The count is exact: it is what llama.cpp itself reports as prompt tokens.
            probe = [Message.system("Be brief."), Message.user("Say hi.")]
            counted = await model.count_tokens(probe)
            response = await model.request(ModelRequest(probe, settings=settings))
            assert counted == response.usage.input_tokens
            for topic in topics:
                result = await agent.run(f"Tell me one fact about {topic}.", session=session)
                assert result.output.strip()
                assert result.usage.input_tokens <= int(CONTEXT * 0.7)
            stored = await session.load()
            assert len(stored) == 2 * len(topics)
            assert await model.count_tokens(stored) > CONTEXT  # the whole would not fit
