"""CPU-bound sync tools in worker processes (``process=True``, ``process: true``): the
event loop, /healthz and the built-in calculator are not held while one computes."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from agenthost.agents import ChatAgent, ToolError
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import ToolOptions, calculator
from agenthost.agents.tools.functions import Tool
from agenthost.agents.tools.processes import TOOL_PROCESSES, ProcessPool
from agenthost.app.build import load_agents
from agenthost.app.config import ConfigError
from agenthost.app.settings import Settings
from tests.agents.tools.cpu_tools import crunch, hang
from tests.conftest import running

pytestmark = pytest.mark.anyio

N = 100_000_000  # ~1-2 s of one C call: a thread would hold the loop all that time


def crunching(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return str(getattr(request.messages[-1].parts[0], "content", ""))
    return call("crunch", f'{{"n": {N}}}')


def calculating(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return str(getattr(request.messages[-1].parts[0], "content", ""))
    return call("calculator", '{"expression": "6 * 7"}')


async def test_a_cpu_bound_tool_in_a_worker_process_holds_neither_healthz_nor_the_calculator() -> (
    None
):
    agents = {
        "cruncher": ChatAgent(
            "cruncher", FunctionModel(crunching), tools=(Tool(crunch, process=True),)
        ),
        "calc": ChatAgent("calc", FunctionModel(calculating), tools=(calculator,)),
    }
    async with running(agents, Settings(adapters=["openai"])) as (_, client):
        # The worker starts (spawn, imports) on the first call: not what is measured.
        await Tool(crunch, process=True).invoke({"n": 10})
        gaps: list[float] = []
        calc_took: list[float] = []
        done = anyio.Event()

        async def crunch_request() -> None:
            body = {"model": "cruncher", "messages": [{"role": "user", "content": "go"}]}
            answer = await client.post("/v1/chat/completions", json=body)
            assert answer.json()["choices"][0]["message"]["content"] == str(sum(range(N)))
            done.set()

        async def healthz() -> None:
            while not done.is_set():
                started = time.perf_counter()
                assert (await client.get("/healthz")).status_code == 200
                gaps.append(time.perf_counter() - started)
                await anyio.sleep(0.01)

        async def calc_request() -> None:
            await anyio.sleep(0.3)
            started = time.perf_counter()
            body = {"model": "calc", "messages": [{"role": "user", "content": "6*7?"}]}
            answer = await client.post("/v1/chat/completions", json=body)
            calc_took.append(time.perf_counter() - started)
            assert answer.json()["choices"][0]["message"]["content"] == "42"

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            group.start_soon(crunch_request)
            group.start_soon(healthz)
            group.start_soon(calc_request)
        crunched = time.perf_counter() - started
    # In a thread, the one C call held the loop for all of ``crunched``: /healthz waited
    # as long (measured by bench/tool_processes.py). In a worker it answers throughout.
    # Relative to the crunch, not in seconds: on a loaded CI machine every request is slower
    # (a /healthz once took 0.3 s there), but none waits for the crunch to end.
    assert crunched > 0.5, crunched
    assert len(gaps) > 10 and max(gaps) < crunched / 3, (crunched, max(gaps), len(gaps))
    assert calc_took[0] < crunched / 2, (crunched, calc_took)
    assert not TOOL_PROCESSES.started, "the server's exit left the workers running"


async def test_a_timed_out_call_is_abandoned_and_shutdown_stops_a_hung_worker() -> None:
    pool = ProcessPool(workers=1)
    tool = Tool(hang, process=True, options=ToolOptions(timeout=0.5))
    # The tool runs in the shared pool; a pool of its own shows the bound and the stop.
    reference = tool.process
    assert reference is not None
    # The worker is up (spawned and imported: seconds on a loaded CI machine).
    await pool.call(reference, {"seconds": 0.0}, "hang")
    with pytest.raises(TimeoutError):
        with anyio.fail_after(0.5):
            await pool.call(reference, {"seconds": 600.0}, "hang")
    assert pool.places.taken == 1, "the abandoned call's worker is still busy"
    workers = list(pool._pool()._processes.values())  # type: ignore[union-attr]
    pool.shutdown()
    for worker in workers:  # stopped, not left to sleep its 600 s (once >5 s under CI's load)
        worker.join(60)
        assert not worker.is_alive()
    with pytest.raises(ToolError, match="timed out"):
        await tool.invoke({"seconds": 60.0})
    TOOL_PROCESSES.shutdown()


def test_process_true_needs_a_sync_module_level_function(tmp_path: Path) -> None:
    def local(n: int) -> int:
        """A function a worker cannot import."""
        return n

    with pytest.raises(TypeError, match="cannot be pickled"):
        Tool(local, process=True)

    async def coroutine(n: int) -> int:
        """Async."""
        return n

    with pytest.raises(TypeError, match="sync functions"):
        Tool(coroutine, process=True)
    (tmp_path / "local_tools.py").write_text(
        'def double(n: int) -> int:\n    """Doubles n."""\n    return 2 * n\n'
    )
    config = tmp_path / "agents.yaml"
    for tool, error in (
        ("{tool: 'local_tools:double', process: true}", None),
        ("{tool: calculator, process: true}", "process: true is for Python functions"),
    ):
        config.write_text(f"agents:\n  - name: a\n    model: echo\n    tools: [{tool}]\n")
        if error is None:
            (agent,) = load_agents(config)[1].values()
            (built,) = agent.options.tools  # type: ignore[attr-defined]
            assert built.process is not None and built.process.root == str(tmp_path)
        else:
            with pytest.raises(ConfigError, match=error):
                load_agents(config)
