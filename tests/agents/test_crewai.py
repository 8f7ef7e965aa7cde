"""A CrewAI Agent and Crew served through the entry point, their LLM on a real
HTTP fake upstream. CrewAI pins openai<3 and mcp<2, so it lives in an
environment of its own (`pip install -e . crewai` + the test tools): skipped here otherwise."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

if importlib.util.find_spec("crewai") is None:
    # Before any environment change: OTEL_SDK_DISABLED would turn off the
    # tracing tests that run later in this process.
    pytest.skip("CrewAI lives in an environment of its own", allow_module_level=True)
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
crewai = pytest.importorskip("crewai")

from agenthost.agents import Message  # noqa: E402
from agenthost.agents.frameworks.crewai import CrewAIAgent, to_chat, to_history  # noqa: E402
from agenthost.agents.results import RunFinished, TextDelta  # noqa: E402
from agenthost.app.registry import Registry  # noqa: E402
from tests.upstream import FakeUpstream, serve_in_thread  # noqa: E402

pytestmark = [
    pytest.mark.anyio,
    # CrewAI warns about its own deprecated fields (function_calling_llm, ...) on every Agent.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeUpstream, str]]:
    upstream = FakeUpstream()
    with serve_in_thread(upstream.app) as url:
        yield upstream, f"{url}/v1"


@pytest.fixture
def registry(fake: tuple[FakeUpstream, str]) -> Registry:
    _, url = fake
    llm = crewai.LLM(model="openai/any", base_url=url, api_key="test")
    agent = crewai.Agent(role="helper", goal="Help.", backstory="Kind.", llm=llm)
    task = crewai.Task(
        description="{history}\n{message}", expected_output="An answer.", agent=agent
    )
    served = Registry.with_defaults()
    served.add("agent", agent, "A CrewAI agent.")
    served.add("crew", crewai.Crew(agents=[agent], tasks=[task]), "A crew.")
    return served


async def test_the_entry_point_registers_agents_and_crews(registry: Registry) -> None:
    assert isinstance(registry["agent"], CrewAIAgent) and isinstance(registry["crew"], CrewAIAgent)


async def test_an_agent_sees_the_whole_conversation(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    upstream, _ = fake
    transcript = [Message.user("my name is Ada"), Message.assistant("hi"), Message.user("and?")]
    updates = [u async for u in registry["agent"].run_stream(transcript)]
    final = updates[-1]
    assert isinstance(final, RunFinished) and final.result.output.startswith("upstream says:")
    assert "".join(u.text for u in updates if isinstance(u, TextDelta)) == final.result.output
    sent = [(m["role"], m["content"]) for m in upstream.requests[-1]["messages"]]
    assert ("user", "my name is Ada") in sent and ("assistant", "hi") in sent
    assert final.result.usage.requests == 1 and final.result.usage.input_tokens > 0


async def test_a_crew_reads_message_and_history(
    registry: Registry, fake: tuple[FakeUpstream, str]
) -> None:
    upstream, _ = fake
    result = await registry["crew"].run([Message.user("first"), Message.user("second")])
    assert "second" in result.output and "user: first" in result.output
    assert len(upstream.requests[-1]["messages"]) == 2  # system, the task


def test_conversions() -> None:
    messages = [Message.system("s"), Message.user("u"), Message.assistant("a")]
    assert to_chat(messages) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
    ]
    assert to_history(messages[1:]) == "user: u\nassistant: a"
