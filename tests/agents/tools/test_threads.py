"""Sync tools' threads: one bound per tool under a shared ceiling, so one tool's hung
calls never make another tool (nor the built-ins) wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import anyio
import pytest

from agenthost.agents import ToolError
from agenthost.agents.tools import ToolOptions, calculator, tool
from agenthost.agents.tools.functions import Tool
from agenthost.agents.tools.threads import USER_THREADS, ThreadLimit

pytestmark = pytest.mark.anyio


@pytest.fixture
def stuck() -> Iterator[threading.Event]:
    """Set at the end of the test: the hung tools' abandoned threads end then."""
    event = threading.Event()
    yield event
    event.set()


def hanging(stuck: threading.Event, name: str = "hang") -> Tool:
    def hang(seconds: float) -> str:
        """Hangs (a lock never released, an upstream that never answers)."""
        stuck.wait(seconds)
        return "late"

    return Tool(hang, name=name, options=ToolOptions(timeout=0.5))


async def test_hung_sync_calls_of_one_tool_do_not_slow_the_calculator(
    stuck: threading.Event,
) -> None:
    # 45 hung calls, each abandoned after its time-out. Before, all sync tools
    # shared one 40-thread pool: the calculator waited for a hung thread to end
    # (27.7 s with 5 s time-outs served; here it could not answer at all).
    hang = hanging(stuck)
    failures: list[str] = []
    before = USER_THREADS.taken  # earlier tests' abandoned threads may still run

    async def call_hang() -> None:
        try:
            await hang.run('{"seconds": 60}')
        except ToolError as exc:
            failures.append(str(exc))

    async with anyio.create_task_group() as group:
        for _ in range(45):
            group.start_soon(call_hang)
        await anyio.sleep(0.7)  # the first ones timed out and were abandoned
        started = time.perf_counter()
        assert await calculator.run('{"expression": "6 * 7"}') == "42"
        took = time.perf_counter() - started
    assert took < 2, took
    assert len(failures) == 45
    # One tool's hung threads held its own places only, never the shared ceiling's.
    assert hang.threads.taken == hang.threads.limit
    assert USER_THREADS.taken - before <= hang.threads.limit


async def test_one_hung_tool_does_not_starve_another_user_tool(stuck: threading.Event) -> None:
    hang = hanging(stuck)

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with anyio.move_on_after(0.3):
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(hang.run, '{"seconds": 60}')
    started = time.perf_counter()
    assert await add.run('{"a": 40, "b": 2}') == "42"
    assert time.perf_counter() - started < 2


async def test_the_shared_ceiling_bounds_every_tool_together(stuck: threading.Event) -> None:
    ceiling = ThreadLimit(3)
    tools = [
        Tool(hanging(stuck, f"hang{i}").function, name=f"hang{i}", ceiling=ceiling)
        for i in range(2)
    ]
    options = ToolOptions(timeout=0.3)
    tools = [t.with_options(options) for t in tools]
    failures: list[str] = []

    async def call(hang: Tool) -> None:
        try:
            await hang.run('{"seconds": 60}')
        except ToolError as exc:
            failures.append(str(exc))

    async with anyio.create_task_group() as group:
        for t in tools:
            for _ in range(2):
                group.start_soon(call, t)
    assert len(failures) == 4
    assert ceiling.taken == 3  # the fourth call never got a thread
    stuck.set()
    with anyio.fail_after(5):
        while ceiling.taken:  # noqa: ASYNC110 - threads release it, nothing to await
            await anyio.sleep(0.01)
    assert [t.threads.taken for t in tools] == [0, 0]


def test_a_limit_takes_a_place_under_its_ceiling_or_none() -> None:
    ceiling = ThreadLimit(1)
    one, two = ThreadLimit(2, ceiling), ThreadLimit(2, ceiling)
    assert one.try_take()
    assert not two.try_take()
    assert two.taken == 0  # its own place was given back
    one.release()
    assert two.try_take() and ceiling.taken == 1
    with pytest.raises(ValueError, match="at least 1"):
        ThreadLimit(0)
