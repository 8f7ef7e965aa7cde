"""Run bounds: output size, duration and the server's shutdown stop a run where it is."""

from collections.abc import AsyncIterator, Sequence

import anyio
import pytest

from agenthost.agents import (
    BaseAgent,
    ChatAgent,
    InMemorySession,
    Message,
    RunFinished,
    RunOptions,
    RunUpdate,
    TextDelta,
    tool,
)
from agenthost.agents.errors import RunInterrupted, RunLimitExceeded
from agenthost.agents.hosting import Hosting
from agenthost.agents.limits import LiveRuns, RunLimits
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.testing import call

pytestmark = pytest.mark.anyio


class Endless(BaseAgent):
    """Streams a word every ``pause`` seconds until stopped; records that it was."""

    def __init__(
        self, pause: float = 0.01, limits: RunLimits | None = None, hosting: Hosting | None = None
    ) -> None:
        super().__init__("endless", limits=limits, hosting=hosting)
        self.pause = pause
        self.stopped = anyio.Event()

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        try:
            while True:
                await anyio.sleep(self.pause)
                yield TextDelta("word ")
        finally:
            self.stopped.set()


async def test_a_stream_over_the_output_bound_stops_with_a_clear_error() -> None:
    agent = Endless(pause=0, limits=RunLimits(max_output_chars=50))
    received = ""
    with pytest.raises(RunLimitExceeded, match="beyond 50 characters") as caught:
        async for update in agent.run_stream("go"):
            assert isinstance(update, TextDelta)
            received += update.text
    assert caught.value.code == "output_limit_exceeded"
    assert len(received) <= 50
    with anyio.fail_after(1):
        await agent.stopped.wait()


async def test_echo_honours_the_output_bound_streamed_or_not() -> None:
    agent = ChatAgent("echo", EchoModel())
    agent.limits = RunLimits(max_output_chars=100)
    big = "word " * 1000
    with pytest.raises(RunLimitExceeded):
        await agent.run(big)
    with pytest.raises(RunLimitExceeded):
        _ = [u async for u in agent.run_stream(big)]
    assert (await agent.run("small")).output == "small"


async def test_a_run_over_its_duration_is_cancelled_tools_included() -> None:
    stopped = anyio.Event()

    @tool
    async def slow() -> str:
        """Takes a minute."""
        try:
            await anyio.sleep(60)
        finally:
            stopped.set()
        return "done"

    agent = ChatAgent("a", ScriptedModel([call("slow"), "never"]), tools=(slow,))
    agent.limits = RunLimits(max_seconds=0.3)
    with (
        anyio.fail_after(5),
        pytest.raises(RunLimitExceeded, match=r"longer than 0\.3 s") as caught,
    ):
        await agent.run("go")
    assert caught.value.code == "run_timeout" and stopped.is_set()

    stopped = anyio.Event()
    agent = ChatAgent("a", ScriptedModel([call("slow"), "never"]), tools=(slow,))
    agent.limits = RunLimits(max_seconds=0.3)
    with anyio.fail_after(5), pytest.raises(RunLimitExceeded):
        _ = [u async for u in agent.run_stream("go")]
    assert stopped.is_set()


async def test_shutdown_interrupts_every_live_run() -> None:
    runs = LiveRuns()
    agent = Endless(pause=0.01, hosting=Hosting(runs=runs))
    results: list[BaseException] = []

    async def consume() -> None:
        try:
            async for _ in agent.run_stream("go"):
                pass
        except RunInterrupted as exc:
            results.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        group.start_soon(consume)
        await anyio.sleep(0.1)
        assert runs.interrupt_all("shutting down") == 2
    assert [str(r) for r in results] == ["shutting down", "shutting down"]
    assert agent.stopped.is_set()


async def test_a_bounded_run_still_finishes_normally() -> None:
    agent = ChatAgent("echo", EchoModel())
    agent.limits = RunLimits(max_output_chars=1000, max_seconds=10)
    updates = [u async for u in agent.run_stream("one two")]
    assert isinstance(updates[-1], RunFinished) and updates[-1].result.output == "one two"


class SlowSession(InMemorySession):
    """Saving a turn takes 0.3 s."""

    async def append(self, messages: Sequence[Message]) -> None:
        await anyio.sleep(0.3)
        await super().append(messages)


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_bound_that_trips_while_a_turn_is_saved_never_cuts_it(streamed: bool) -> None:
    agent = ChatAgent("echo", EchoModel())
    agent.limits = RunLimits(max_seconds=0.1)
    session = SlowSession()
    if streamed:
        updates = [u async for u in agent.run_stream("one two", session=session)]
        assert isinstance(updates[-1], RunFinished)
    else:
        assert (await agent.run("one two", session=session)).output == "one two"
    assert [m.text for m in session.messages] == ["one two", "one two"]
    await anyio.sleep(0.05)  # nothing pending is left to strike later
