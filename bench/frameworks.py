"""What hosting another framework's agent costs: the framework called directly vs agenthost.

Each :class:`Case` is one framework's agent on the fake upstream
(``tests/upstream.py``, a real HTTP fake in a thread of this process, so its
CPU counts alike for every variant). Side by side in one process and one
run, rounds alternating the order, every call answered by the upstream is
made three ways:

- ``direct``: the framework's own call, what a user of the framework writes
  without a host (BeeAI ``agent.run(prompt)``, Agent Framework
  ``agent.run(prompt, stream=True)``; ADK
  ``Runner.run_async`` on a new session, SSE streaming; CrewAI
  ``Crew.kickoff_async``);
- ``agent``: agenthost's wrapper of the same object, ``Agent.run_stream`` (no HTTP);
- ``served``: the openai SDK streaming ``/v1/chat/completions`` from the
  agenthost app in-process (``httpx.ASGITransport``: the app's whole request
  path, no sockets).

Prints CPU and wall time per call and the CPU ratio to ``direct``. A case
whose framework is not installed is skipped (CrewAI lives in a venv of its
own: it pins openai<3 and mcp<2).

    PYTHONPATH=<a folder with only a `tests` link> .venv/bin/python -P \\
        bench/frameworks.py [--case adk] [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from agenthost.agents import Agent
from agenthost.app.registry import Registry
from tests.conftest import openai_client
from tests.upstream import FakeUpstream, serve_in_thread

PROMPT = "tell me about the sea and the waves in a few words"
Call = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Case:
    """One framework: ``build(url)`` gives its direct call and the object agenthost wraps."""

    name: str
    module: str
    """The framework's import name: the case is skipped without it."""
    build: Callable[[str], tuple[Call, Any]]


@dataclass
class Totals:
    cpu: float = 0.0
    wall: float = 0.0
    calls: int = 0
    texts: set[str] = field(default_factory=set)


def _on_upstream(url: str) -> None:
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = url, "bench-key"


def beeai(url: str) -> tuple[Call, Any]:
    _on_upstream(url)
    from tests.app.framework_agents import _beeai

    agent = _beeai("any")

    async def direct() -> None:
        agent.memory.reset()  # each call a fresh conversation, as each hosted call is
        await agent.run(PROMPT)

    return direct, _beeai("any")


def agent_framework(url: str) -> tuple[Call, Any]:
    _on_upstream(url)
    from tests.app.framework_agents import _agent_framework

    agent = _agent_framework("any")

    async def direct() -> None:
        async for _ in agent.run(PROMPT, stream=True):  # streamed, as agenthost runs it
            pass

    return direct, _agent_framework("any")


def adk(url: str) -> tuple[Call, Any]:
    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    model = LiteLlm(model="openai/any", api_base=url, api_key="test")
    sessions = InMemorySessionService()
    runner = Runner(
        agent=LlmAgent(name="bench", model=model, instruction="Answer."),
        app_name="bench",
        session_service=sessions,
    )
    config = RunConfig(streaming_mode=type(RunConfig().streaming_mode).SSE)

    async def direct() -> None:
        session = await sessions.create_session(
            app_name="bench", user_id="u", session_id=uuid.uuid4().hex
        )
        message = types.Content(role="user", parts=[types.Part(text=PROMPT)])
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message=message, run_config=config
        ):
            pass
        await sessions.delete_session(app_name="bench", user_id="u", session_id=session.id)

    return direct, LlmAgent(name="bench", model=model, instruction="Answer.")


def crewai(url: str) -> tuple[Call, Any]:
    from crewai import LLM, Crew, Task
    from crewai import Agent as CrewAgent

    def crew() -> Crew:
        llm = LLM(model="openai/any", base_url=url, api_key="test", stream=True)
        agent = CrewAgent(role="bench", goal="Answer.", backstory="A bench.", llm=llm)
        task = Task(description="{message}", expected_output="An answer.", agent=agent)
        return Crew(agents=[agent], tasks=[task])

    direct_crew = crew()

    async def direct() -> None:
        await direct_crew.kickoff_async(inputs={"message": PROMPT})

    return direct, crew()


CASES = [
    Case("beeai", "beeai_framework", beeai),
    Case("agent-framework", "agent_framework", agent_framework),
    Case("adk", "google.adk", adk),
    Case("crewai", "crewai", crewai),
]


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is missing
        return False


async def bench(case: Case, url: str, calls: int, rounds: int) -> dict[str, Totals]:
    direct, framework_object = case.build(url)
    registry = Registry.with_defaults()
    agent: Agent = registry.add("bench", framework_object)

    async def wrapped() -> None:
        async for _ in agent.run_stream(PROMPT):
            pass

    totals = {name: Totals() for name in ("direct", "agent", "served")}
    async with openai_client({"bench": agent}) as client:

        async def served() -> None:
            stream = await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": PROMPT}], stream=True
            )
            async for _ in stream:
                pass

        variants: dict[str, Call] = {"direct": direct, "agent": wrapped, "served": served}
        for call in variants.values():  # warm up: imports, first connections
            await call()
        for round_ in range(rounds):
            order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in order:
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(calls):
                    await variants[name]()
                total = totals[name]
                total.cpu += time.process_time() - cpu
                total.wall += time.perf_counter() - wall
                total.calls += calls
    return totals


def report(totals: dict[str, Totals]) -> str:
    base = totals["direct"]
    lines = [f"{'variant':<8} {'calls':>6} {'CPU ms/call':>12} {'wall ms/call':>13} {'CPU x':>6}"]
    for name, total in totals.items():
        cpu, wall = total.cpu / total.calls * 1e3, total.wall / total.calls * 1e3
        ratio = total.cpu / base.cpu if base.cpu else 0.0
        lines.append(f"{name:<8} {total.calls:>6} {cpu:>12.2f} {wall:>13.2f} {ratio:>6.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    names = [case.name for case in CASES]
    parser.add_argument("--case", action="append", choices=names, help="only these (repeatable)")
    parser.add_argument("--calls", type=int, default=50, help="per variant and round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    with serve_in_thread(FakeUpstream().app) as url:
        for case in CASES:
            if args.case and case.name not in args.case:
                continue
            if not installed(case.module):
                print(f"{case.name}: skipped ({case.module} is not installed)\n")
                continue
            totals = asyncio.run(bench(case, f"{url}/v1", args.calls, args.rounds))
            print(f"{case.name}: {args.rounds} rounds x {args.calls} streamed calls, c=1")
            print(report(totals) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
