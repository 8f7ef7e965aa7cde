"""A BeeAI Framework agent served by ``agenthost serve``, over every client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.app import framework_clients as clients
from tests.app import framework_serving as serve
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """agents:
  - {name: bee, description: A BeeAI agent., import: "tests.app.framework_agents:bee"}
  - {name: slow-bee, import: "tests.app.framework_agents:slow_bee"}
"""


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


@pytest.fixture(scope="module")
def served(
    fake: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    config = tmp_path_factory.mktemp("bee") / "agents.yaml"
    config.write_text(CONFIG)
    with serve.serving(config, fake[1]) as url:
        yield url


async def test_chat_completions_stream_the_answer(served: str) -> None:
    # In text mode (final_answer_as_tool=False) BeeAI gives its answer whole.
    deltas = await clients.chat_deltas(served, "bee", 'use shout with {"text": "served"}')
    assert "".join(deltas).strip() == "The result is SERVED."


async def test_a2a_shows_the_tool_call_and_continues_the_context(
    served: str, fake: tuple[FakeUpstream, str]
) -> None:
    first = await clients.a2a_turn(served, "bee", 'use shout with {"text": "a2a"}')
    assert "calling shout" in clients.notes_of(first)
    answer, context = clients.answer_of(first)
    assert answer.strip() == "The result is A2A." and context
    second = await clients.a2a_turn(served, "bee", "and now?", context)
    assert clients.answer_of(second)[0].strip() == "upstream says: and now?"
    sent = clients.texts_sent(fake[0])
    assert 'use shout with {"text": "a2a"}' in sent and "A2A" in sent  # the tool's result
    assert sent[-1] == "and now?"


async def test_mcp_calls_the_agent(served: str) -> None:
    assert (await clients.mcp_call(served, "bee", "over mcp")).strip() == "upstream says: over mcp"


async def test_leaving_a_stream_closes_the_upstream_stream(
    served: str, fake: tuple[FakeUpstream, str]
) -> None:
    await serve.cancel_mid_stream(served, "slow-bee", fake[0])
