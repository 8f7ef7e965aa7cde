"""``thinking`` and ``output_config.effort`` on /v1/messages become the model's
``reasoning_effort`` (``adapters/anthropic/thinking.py``): the anthropic SDK asks,
and the fake upstream records what the agent's ``openai:`` model sent it."""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from tests.adapters.anthropic.clients import running, sdk
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

ASK: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def claude(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[anthropic.AsyncAnthropic]:
    model = OpenAIModel("reasoner", base_url=upstream[1], api_key="k", max_retries=0)
    agents: dict[str, Agent] = {"thinker": ChatAgent("thinker", model)}
    async with running(agents) as client:
        yield sdk(client)
    await model.aclose()


async def _sent_effort(
    claude: anthropic.AsyncAnthropic, fake: FakeUpstream, **fields: Any
) -> str | None:
    """The ``reasoning_effort`` the upstream got for a message asked with ``fields``."""
    max_tokens = fields.pop("max_tokens", 21_000)
    message = await claude.messages.create(
        model="thinker", max_tokens=max_tokens, messages=ASK, **fields
    )
    assert message.content[-1].type == "text"
    sent = fake.requests[-1]
    assert sent["max_tokens"] == max_tokens
    return sent.get("reasoning_effort")


@pytest.mark.parametrize(
    ("budget", "effort"), [(1024, "low"), (4000, "low"), (10_000, "medium"), (20_000, "high")]
)
async def test_a_thinking_budget_asks_for_the_effort_of_its_size(
    claude: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str], budget: int, effort: str
) -> None:
    thinking: Any = {"type": "enabled", "budget_tokens": budget}
    assert await _sent_effort(claude, upstream[0], thinking=thinking) == effort


@pytest.mark.parametrize(
    ("fields", "effort"),
    [
        ({"output_config": {"effort": "medium"}}, "medium"),
        ({"output_config": {"effort": "low"}, "thinking": {"type": "adaptive"}}, "low"),
        ({"output_config": {"effort": "max"}, "thinking": {"type": "adaptive"}}, "xhigh"),
        ({"output_config": {"effort": "xhigh"}}, "xhigh"),
        # Anthropic's default effort asks for nothing: what Claude Code sends every time.
        ({"output_config": {"effort": "high"}, "thinking": {"type": "adaptive"}}, None),
        ({"output_config": {"effort": "high"}}, None),
        # An effort other than the default is the direct knob: it wins over a budget.
        (
            {
                "output_config": {"effort": "low"},
                "thinking": {"type": "enabled", "budget_tokens": 20_000},
            },
            "low",
        ),
        (
            {
                "output_config": {"effort": "high"},
                "thinking": {"type": "enabled", "budget_tokens": 2000},
            },
            "low",
        ),
        ({"thinking": {"type": "adaptive"}}, None),  # the model decides: nothing asked
        ({"thinking": {"type": "disabled"}, "output_config": {"effort": "low"}}, None),
        ({}, None),
    ],
)
async def test_effort_and_thinking_modes_map_to_reasoning_effort(
    claude: anthropic.AsyncAnthropic,
    upstream: tuple[FakeUpstream, str],
    fields: dict[str, Any],
    effort: str | None,
) -> None:
    assert await _sent_effort(claude, upstream[0], **fields) == effort


async def test_a_budget_must_stay_below_max_tokens_unless_thinking_is_interleaved(
    claude: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake = upstream[0]
    asked = len(fake.requests)
    thinking: Any = {"type": "enabled", "budget_tokens": 2000}
    with pytest.raises(anthropic.BadRequestError) as caught:
        await claude.messages.create(
            model="thinker", max_tokens=2000, messages=ASK, thinking=thinking
        )
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "`max_tokens` must be greater than `thinking.budget_tokens`",
        },
    }
    assert len(fake.requests) == asked  # refused before the agent ran
    # With interleaved thinking Anthropic lets the budget pass max_tokens; so does this.
    beta = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
    message = await claude.messages.create(
        model="thinker", max_tokens=2000, messages=ASK, thinking=thinking, extra_headers=beta
    )
    assert message.content[-1].type == "text"
    assert fake.requests[-1]["reasoning_effort"] == "low"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"thinking": {"type": "enabled", "budget_tokens": 1000}},
            "thinking.budget_tokens: Input should be greater than or equal to 1024",
        ),
        ({"thinking": {"type": "enabled"}}, "thinking.budget_tokens: Field required"),
        ({"thinking": {"type": "sometimes"}}, "thinking.type: Input should be 'enabled'"),
        ({"output_config": {"effort": "huge"}}, "output_config.effort: Input should be 'low'"),
    ],
)
async def test_bad_thinking_or_effort_is_a_400_in_anthropics_shape(
    claude: anthropic.AsyncAnthropic, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await claude.messages.create(model="thinker", max_tokens=4000, messages=ASK, **fields)
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith(message)
