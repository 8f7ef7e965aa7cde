"""CPU-bound sync tools in threads against worker processes (``process: true``).

``--tools`` concurrent calls of a CPU-bound tool (``sum(range(n))``: one C
call that holds the interpreter's lock), run as every sync tool runs (a
thread of its own) and then in the worker processes; meanwhile a ticker
measures how late the event loop wakes (what /healthz and every other
request wait) and the built-in calculator is called once a tick (its
latency counted from the tick: the wait for the loop, then its run). Prints the
loop's p50/p99/max lateness, the calculator's p99 and max, and the ratios.

    .venv/bin/python bench/tool_processes.py [--tools 4] [--n 30000000]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from cpu_work import crunch

from agenthost.agents.tools import calculator
from agenthost.agents.tools.functions import Tool
from agenthost.agents.tools.processes import TOOL_PROCESSES
from agenthost.agents.tools.threads import MAX_SYNC_THREADS

TICK = 0.01


async def measure(tool: Tool, tools: int, n: int) -> dict[str, float]:
    await tool.invoke({"n": 10})  # a worker process starts on first use: not measured
    late: list[float] = []
    calc: list[float] = []
    running = asyncio.gather(*(tool.invoke({"n": n}) for _ in range(tools)))
    started = time.perf_counter()
    while not running.done():
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        late.append(time.perf_counter() - before - TICK)
        # A calculator call asked for at the tick: its wait for the loop, then its run.
        assert str(await calculator.invoke({"expression": "6 * 7"})) == "42"
        calc.append(time.perf_counter() - before - TICK)
    await running
    took = time.perf_counter() - started
    late.sort()
    calc.sort()
    return {
        "wall": took,
        "p50": statistics.median(late),
        "p99": late[math.ceil(len(late) * 0.99) - 1],
        "max": late[-1],
        "calc_p99": calc[math.ceil(len(calc) * 0.99) - 1],
        "calc_max": calc[-1],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=4)
    parser.add_argument("--n", type=int, default=30_000_000)
    args = parser.parse_args()
    print(
        f"{args.tools} concurrent sum(range({args.n:,})) tool calls "
        f"(thread bound {MAX_SYNC_THREADS})"
    )
    results = {}
    for mode, tool in (
        ("thread", Tool(crunch, max_threads=args.tools)),
        ("process", Tool(crunch, process=True)),
    ):
        results[mode] = r = await measure(tool, args.tools, args.n)
        print(
            f"{mode:8} wall {r['wall']:6.2f} s  loop late p50 {r['p50'] * 1000:7.1f} ms"
            f"  p99 {r['p99'] * 1000:7.1f} ms  max {r['max'] * 1000:7.1f} ms"
            f"  calculator p99 {r['calc_p99'] * 1000:7.1f} ms  max {r['calc_max'] * 1000:7.1f} ms"
        )
    thread, process = results["thread"], results["process"]
    for key in ("p99", "max", "calc_max"):
        print(f"ratio thread/process {key}: {thread[key] / max(process[key], 1e-6):.1f}x")
    TOOL_PROCESSES.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
