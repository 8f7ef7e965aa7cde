"""What hosting a framework's agent costs: the framework called directly vs agenthost.

Side by side in one process and one run, rounds alternating the order, each
call a streamed one-tool-call-free answer from the test upstream (a real
HTTP fake in a thread of this process, so its CPU counts alike for all):

- ``direct``: the framework's own call (ADK: ``Runner.run_async`` on a new
  session, SSE streaming; CrewAI: ``Crew.kickoff_async``);
- ``agent``: agenthost's wrapper, ``Agent.run_stream`` (no HTTP);
- ``served``: the openai SDK streaming ``/v1/chat/completions`` from the
  agenthost app (in-process ASGI transport, the app's whole request path).

Prints CPU and wall time per call and the ratio to ``direct``.

    PYTHONPATH=<a folder with only a `tests` link> .venv/bin/python -P \
        bench/frameworks_adk_crewai.py --framework adk [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from agenthost.agents import Agent
from agenthost.app.registry import Registry
from tests.conftest import openai_client
from tests.upstream import FakeUpstream, serve_in_thread

PROMPT = "tell me about the sea and the waves in a few words"
Call = Callable[[], Awaitable[None]]


@dataclass
class Totals:
    cpu: float = 0.0
    wall: float = 0.0
    calls: int = 0
    texts: set[str] = field(default_factory=set)


def adk_variants(url: str) -> tuple[Call, Agent]:
    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    model = LiteLlm(model="openai/any", api_base=url, api_key="test")
    adk = LlmAgent(name="bench", model=model, instruction="Answer.")
    sessions = InMemorySessionService()
    runner = Runner(agent=adk, app_name="bench", session_service=sessions)
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

    registry = Registry.with_defaults()
    registry.add("bench", LlmAgent(name="bench", model=model, instruction="Answer."), "")
    return direct, registry["bench"]


def crewai_variants(url: str) -> tuple[Call, Agent]:
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

    registry = Registry.with_defaults()
    registry.add("bench", crew(), "")
    return direct, registry["bench"]


async def bench(framework: str, url: str, calls: int, rounds: int) -> dict[str, Totals]:
    build = adk_variants if framework == "adk" else crewai_variants
    direct, agent = build(url)

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
    parser.add_argument("--framework", choices=["adk", "crewai"], default="adk")
    parser.add_argument("--calls", type=int, default=50, help="per variant and round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    with serve_in_thread(FakeUpstream().app) as url:
        totals = asyncio.run(bench(args.framework, f"{url}/v1", args.calls, args.rounds))
    print(f"{args.framework}: {args.rounds} rounds x {args.calls} streamed calls, c=1")
    print(report(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
