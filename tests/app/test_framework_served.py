"""BeeAI Framework and Microsoft Agent Framework agents served by ``agenthost
serve``, over every client: one module, one server per framework."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.app import framework_clients as clients
from tests.app import framework_serving as serve
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@dataclass(frozen=True)
class Framework:
    agent: str
    """The served agent's name; ``slow-<agent>`` streams slowly."""
    description: str
    pieces: bool
    """Whether the answer streams in more than one delta."""

    @property
    def config(self) -> str:
        module = "tests.app.framework_agents"
        return (
            "agents:\n"
            f"  - {{name: {self.agent}, description: {self.description},"
            f' import: "{module}:{self.agent}"}}\n'
            f'  - {{name: slow-{self.agent}, import: "{module}:slow_{self.agent}"}}\n'
        )


FRAMEWORKS = [
    # In text mode (final_answer_as_tool=False) BeeAI gives its answer whole.
    pytest.param(Framework("bee", "A BeeAI agent.", pieces=False), id="beeai"),
    pytest.param(Framework("maf", "An Agent Framework agent.", pieces=True), id="agent_framework"),
]


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


@pytest.fixture(scope="module", params=FRAMEWORKS)
def framework(request: pytest.FixtureRequest) -> Framework:
    chosen: Framework = request.param
    return chosen


@pytest.fixture(scope="module")
def served(
    framework: Framework, fake: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    config = tmp_path_factory.mktemp(framework.agent) / "agents.yaml"
    config.write_text(framework.config)
    with serve.serving(config, fake[1]) as url:
        yield url


async def test_chat_completions_stream_the_answer(served: str, framework: Framework) -> None:
    deltas = await clients.chat_deltas(served, framework.agent, 'use shout with {"text": "served"}')
    if framework.pieces:
        assert len([d for d in deltas if d]) > 1
    assert "".join(deltas).strip() == "The result is SERVED."


async def test_a2a_shows_the_tool_call_and_continues_the_context(
    served: str, framework: Framework, fake: tuple[FakeUpstream, str]
) -> None:
    first = await clients.a2a_turn(served, framework.agent, 'use shout with {"text": "a2a"}')
    assert "calling shout" in clients.notes_of(first)
    answer, context = clients.answer_of(first)
    assert answer.strip() == "The result is A2A." and context
    second = await clients.a2a_turn(served, framework.agent, "and now?", context)
    assert clients.answer_of(second)[0].strip() == "upstream says: and now?"
    sent = clients.texts_sent(fake[0])
    assert 'use shout with {"text": "a2a"}' in sent and "A2A" in sent  # the tool's result
    assert sent[-1] == "and now?"


async def test_mcp_calls_the_agent(served: str, framework: Framework) -> None:
    answer = await clients.mcp_call(served, framework.agent, "over mcp")
    assert answer.strip() == "upstream says: over mcp"


async def test_leaving_a_stream_closes_the_upstream_stream(
    served: str, framework: Framework, fake: tuple[FakeUpstream, str]
) -> None:
    await serve.cancel_mid_stream(served, f"slow-{framework.agent}", fake[0])
