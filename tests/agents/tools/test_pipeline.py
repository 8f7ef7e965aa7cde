"""The tool pipeline: validation, retries, events, cache, time-out, concurrency."""

import asyncio
import logging
import time
from dataclasses import dataclass, field

import pytest

from agenthost.agents import ChatAgent, FatalToolError, ToolError, tool
from agenthost.agents.models import ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import CacheOptions, LoggingHooks, Tool, ToolEvent, ToolOptions

pytestmark = pytest.mark.anyio


@dataclass
class Recorder:
    """A hook that keeps every event."""

    events: list[ToolEvent] = field(default_factory=list)

    async def on_tool_event(self, event: ToolEvent) -> None:
        self.events.append(event)

    def kinds(self, call_id: str | None = None) -> list[tuple[str, int]]:
        return [(e.kind, e.attempt) for e in self.events if call_id is None or e.call_id == call_id]


def counted(options: ToolOptions, fail: int = 0, error: type[Exception] = ConnectionError) -> Tool:
    """A tool that fails its first ``fail`` runs, counting every run in ``.runs``."""
    runs: list[int] = []

    def multiply(a: int, b: int = 2) -> int:
        """Multiply two integers."""
        runs.append(a)
        if len(runs) <= fail:
            raise error(f"failure {len(runs)}")
        return a * b

    made = Tool(multiply, options=options)
    made.runs = runs  # type: ignore[attr-defined]
    return made


async def test_invalid_input_goes_back_and_the_models_second_try_succeeds() -> None:
    recorder = Recorder()
    multiply = counted(ToolOptions())
    bad, good = call("multiply", '{"a": "seven", "c": 1}'), call("multiply", '{"a": 7}')
    model = ScriptedModel([bad, good, "14"])
    agent = ChatAgent("a", model, tools=(multiply,), tool_hooks=[recorder])
    result = await agent.run("7 times 2?")
    assert result.output == "14"
    (first,) = model.requests[1].messages[-1].parts
    assert first.is_error and first.content == (  # type: ignore[union-attr]
        "invalid arguments for multiply: a: Input should be a valid integer, "
        "unable to parse string as an integer; c: Extra inputs are not permitted"
    )
    (second,) = model.requests[2].messages[-1].parts
    assert (second.content, second.is_error) == ("14", False)  # type: ignore[union-attr]
    assert multiply.runs == [7]  # type: ignore[attr-defined]
    assert recorder.kinds(bad.id) == [("error", 0), ("finish", 0)]
    assert recorder.kinds(good.id) == [("start", 1), ("success", 1), ("finish", 1)]
    assert recorder.events[-1].arguments == {"a": 7, "b": 2}


async def test_a_raising_tool_reports_an_error_event() -> None:
    recorder = Recorder()
    broken = counted(ToolOptions(), fail=5, error=RuntimeError)
    with pytest.raises(ToolError, match="multiply failed: failure 1"):
        await broken.run('{"a": 1}', call_id="c1", hooks=[recorder])
    assert recorder.kinds() == [("start", 1), ("error", 1), ("finish", 1)]
    assert str(recorder.events[-1].error) == "multiply failed: failure 1"


async def test_failures_are_retried_and_counted() -> None:
    recorder = Recorder()
    flaky = counted(ToolOptions(retries=2, backoff=0.01), fail=2)
    assert await flaky.run('{"a": 3}', hooks=[recorder]) == "6"
    assert len(flaky.runs) == 3  # type: ignore[attr-defined]
    assert recorder.kinds() == [
        ("start", 1),
        ("error", 1),
        ("start", 2),
        ("error", 2),
        ("start", 3),
        ("success", 3),
        ("finish", 3),
    ]
    exhausted = counted(ToolOptions(retries=1, backoff=0), fail=5)
    with pytest.raises(ToolError, match="failure 2"):
        await exhausted.run('{"a": 3}')
    assert len(exhausted.runs) == 2  # type: ignore[attr-defined]


async def test_a_fatal_error_is_never_retried() -> None:
    recorder = Recorder()
    fatal = counted(ToolOptions(retries=3, backoff=0), fail=5, error=FatalToolError)
    with pytest.raises(FatalToolError, match="failure 1"):
        await fatal.run('{"a": 3}', hooks=[recorder])
    assert len(fatal.runs) == 1  # type: ignore[attr-defined]
    assert recorder.kinds() == [("start", 1), ("error", 1), ("finish", 1)]


async def test_the_cache_hits_on_the_same_validated_input_only() -> None:
    recorder = Recorder()
    cached = counted(ToolOptions(cache=CacheOptions(max_entries=2, ttl=60)))
    assert await cached.run('{"a": 4, "b": 3}', hooks=[recorder]) == "12"
    # Same input after validation: other key order, a numeric string coerced.
    assert await cached.run('{"b": 3, "a": "4"}', hooks=[recorder]) == "12"
    assert cached.runs == [4]  # type: ignore[attr-defined]
    assert [e.cached for e in recorder.events if e.kind == "success"] == [False, True]
    assert recorder.kinds()[3:] == [("start", 1), ("success", 1), ("finish", 1)]
    assert await cached.run('{"a": 5, "b": 3}') == "15"
    assert await cached.run('{"a": 4}') == "8"  # b defaults to 2: another input
    assert cached.runs == [4, 5, 4]  # type: ignore[attr-defined]
    assert cached.cache is not None and len(cached.cache) == 2  # bounded
    assert await cached.run('{"a": 4, "b": 3}') == "12"  # the least recently used went out
    assert cached.runs == [4, 5, 4, 4]  # type: ignore[attr-defined]
    assert (cached.cache.hits, cached.cache.misses) == (1, 4)
    # Retry settings are not part of the key: a copy with other options has its own cache.
    copy = cached.with_options(ToolOptions(retries=3, cache=CacheOptions()))
    assert copy.cache is not cached.cache


async def test_concurrent_identical_calls_of_a_cached_tool_run_it_once() -> None:
    runs: list[int] = []

    @tool(options=ToolOptions(cache=CacheOptions()))
    async def slow_double(n: int) -> int:
        """Double a number, slowly."""
        runs.append(n)
        await asyncio.sleep(0.05)
        if n < 0:
            raise ValueError("negative")
        return 2 * n

    assert await asyncio.gather(*(slow_double.run('{"n": 4}') for _ in range(5))) == ["8"] * 5
    assert runs == [4]
    # A failure is not shared: each waiting caller then runs the tool itself.
    failed = await asyncio.gather(
        *(slow_double.run('{"n": -1}') for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(f, ToolError) for f in failed) and runs == [4, -1, -1, -1]


async def test_cached_entries_expire() -> None:
    cached = counted(ToolOptions(cache=CacheOptions(ttl=0.05)))
    await cached.run('{"a": 1}')
    await cached.run('{"a": 1}')
    await asyncio.sleep(0.1)
    await cached.run('{"a": 1}')
    assert cached.runs == [1, 1]  # type: ignore[attr-defined]


async def test_a_time_out_stops_waiting_for_async_and_sync_tools() -> None:
    recorder = Recorder()

    @tool(options=ToolOptions(timeout=0.05))
    async def sleepy() -> str:
        """Sleeps too long."""
        await asyncio.sleep(10)
        return "late"

    @tool(options=ToolOptions(timeout=0.05))
    def blocking() -> str:
        """Blocks a worker thread too long."""
        time.sleep(2)
        return "late"

    started = time.perf_counter()
    with pytest.raises(ToolError, match=r"sleepy timed out after 0.05 s"):
        await sleepy.run("{}", hooks=[recorder])
    with pytest.raises(ToolError, match=r"blocking timed out after 0.05 s"):
        await blocking.run("{}")
    assert time.perf_counter() - started < 1  # not the 2 s the call would take
    assert recorder.kinds() == [("start", 1), ("error", 1), ("finish", 1)]


async def test_concurrent_calls_of_one_tool() -> None:
    recorder = Recorder()

    @tool
    async def slow_square(n: int) -> int:
        """Square a number, slowly."""
        await asyncio.sleep(0.01 * (n % 3))
        return n * n

    results = await asyncio.gather(
        *(slow_square.run(f'{{"n": {n}}}', call_id=f"c{n}", hooks=[recorder]) for n in range(20))
    )
    assert results == [str(n * n) for n in range(20)]
    for n in range(20):
        assert recorder.kinds(f"c{n}") == [("start", 1), ("success", 1), ("finish", 1)]
        assert [e.result for e in recorder.events if e.call_id == f"c{n}"][-1] == str(n * n)


async def test_a_hook_can_refuse_a_call_and_a_broken_hook_breaks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Refuse:
        async def on_tool_event(self, event: ToolEvent) -> None:
            if event.kind == "start" and event.arguments == {"a": 13, "b": 2}:
                raise ToolError("not approved")

    class Broken:
        async def on_tool_event(self, event: ToolEvent) -> None:
            raise RuntimeError("observer bug")

    guarded = counted(ToolOptions(retries=2, backoff=0))
    recorder = Recorder()
    with pytest.raises(ToolError, match="not approved"):
        await guarded.run('{"a": 13}', hooks=[Refuse(), recorder])
    assert guarded.runs == []  # type: ignore[attr-defined]
    assert await guarded.run('{"a": 1}', hooks=[Broken(), Refuse()]) == "2"
    assert "observer bug" in caplog.text


async def test_logging_hooks_write_one_structured_line_per_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="agenthost.agents.tools")
    flaky = counted(ToolOptions(retries=1, backoff=0), fail=1)
    await flaky.run('{"a": 2}', call_id="call_9", hooks=[LoggingHooks()])
    records = [r for r in caplog.records if r.name == "agenthost.agents.tools"]
    assert [r.levelname for r in records] == ["WARNING", "INFO"]
    finish = records[-1].tool_event  # type: ignore[attr-defined]
    assert finish["event"] == "tool.finish" and finish["outcome"] == "ok"
    assert (finish["tool"], finish["call_id"], finish["attempt"]) == ("multiply", "call_9", 2)
    assert "event=tool.finish tool=multiply call_id=call_9" in records[-1].getMessage()
