"""What the tool pipeline costs per call, next to a bare ``await``.

    .venv/bin/python bench/tool_pipeline.py [--calls 20000]

Each line is the mean wall time of one ``tool.run(json)`` of a trivial async
tool (validate → events → cache → run → result as text), in one event loop.
"""

from __future__ import annotations

import argparse
import time

import anyio

from agenthost.agents.tools import CacheOptions, LoggingHooks, ToolHooks, ToolOptions, tool


@tool
async def add(a: int, b: int = 1) -> int:
    """Add two integers."""
    return a + b


async def bare(a: int, b: int) -> int:
    return a + b


async def main(calls: int) -> None:
    cases: list[tuple[str, object, tuple[ToolHooks, ...]]] = [
        ("pipeline, no hooks", add, ()),
        ("pipeline, logging hooks (INFO off)", add, (LoggingHooks(),)),
        ("pipeline, cache hit", add.with_options(ToolOptions(cache=CacheOptions())), ()),
        ("pipeline, with a time-out", add.with_options(ToolOptions(timeout=5)), ()),
    ]
    for label, runnable, hooks in cases:
        assert isinstance(runnable, type(add))
        for _ in range(500):
            await runnable.run('{"a": 1, "b": 2}', hooks=hooks)
        started = time.perf_counter()
        for _ in range(calls):
            await runnable.run('{"a": 1, "b": 2}', hooks=hooks)
        print(f"{label:40} {(time.perf_counter() - started) / calls * 1e6:7.1f} µs/call")
    started = time.perf_counter()
    for _ in range(calls):
        await bare(1, 2)
    print(f"{'bare await':40} {(time.perf_counter() - started) / calls * 1e6:7.2f} µs/call")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20000)
    anyio.run(main, parser.parse_args().calls)
