"""What hosting costs per call of another framework's agent: agenthost vs the framework direct.

Each case is one framework's agent on the fake upstream (``tests/upstream.py``,
in a thread of this process). Side by side in one run, rounds alternating the
order, every call is made two ways:

- ``direct``: the framework's own call (``agent.run(prompt)``), what a user
  of the framework writes without a host;
- ``hosted``: the same agent served by agenthost's app in-process (its
  registry's factory, the OpenAI adapter, a session), called with the
  ``openai`` SDK's ``chat.completions.create`` over ``httpx.ASGITransport``
  (no sockets, so the difference is agenthost's code, not the network).

Printed per case: mean wall time and process CPU per call (the fake
upstream's thread counts in both), and hosted / direct. More frameworks are
more :class:`Case` entries in ``CASES`` (or a sibling module importing them).

    PYTHONPATH=<dir with a tests symlink> .venv/bin/python -P bench/frameworks.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from asgi_lifespan import LifespanManager

from agenthost.app.registry import Registry
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.upstream import FakeUpstream, serve_in_thread

PROMPT = "hello there"


@dataclass
class Case:
    """One framework: its agent on ``url``, and how its own API calls it."""

    name: str
    build: Callable[[str], Any]
    direct: Callable[[Any, str], Awaitable[str]]


def _beeai(url: str) -> Any:
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = url, "bench-key"
    from tests.app.framework_agents import _beeai

    return _beeai("any")


async def _beeai_direct(agent: Any, prompt: str) -> str:
    agent.memory.reset()  # each call a fresh conversation, as each hosted call is
    output = await agent.run(prompt)
    return str(output.last_message.text)


def _agent_framework(url: str) -> Any:
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = url, "bench-key"
    from tests.app.framework_agents import _agent_framework

    return _agent_framework("any")


async def _agent_framework_direct(agent: Any, prompt: str) -> str:
    return str((await agent.run(prompt)).text)


CASES = [
    Case("beeai", _beeai, _beeai_direct),
    Case("agent-framework", _agent_framework, _agent_framework_direct),
]


async def _timed(calls: int, call: Callable[[], Awaitable[str]]) -> tuple[float, float]:
    """Mean wall and CPU seconds per call."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        assert (await call()).strip(), "an empty answer"
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


async def bench_case(case: Case, url: str, calls: int, rounds: int) -> dict[str, list[float]]:
    agent = case.build(url)
    registry = Registry.with_defaults()
    registry.add(case.name, case.build(url))
    app = create_app(Settings(adapters=["openai"]), registry)  # type: ignore[call-arg]
    samples: dict[str, list[float]] = {
        "direct": [],
        "hosted": [],
        "direct_cpu": [],
        "hosted_cpu": [],
    }
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            client = openai.AsyncOpenAI(
                base_url="http://localhost/v1", api_key="k", http_client=http
            )

            async def hosted() -> str:
                reply = await client.chat.completions.create(
                    model=case.name, messages=[{"role": "user", "content": PROMPT}]
                )
                return reply.choices[0].message.content or ""

            async def direct() -> str:
                return await case.direct(agent, PROMPT)

            await _timed(3, direct)  # warm-up: imports, connection pools
            await _timed(3, hosted)
            for index in range(rounds):
                order = [("direct", direct), ("hosted", hosted)]
                for way, call in order if index % 2 == 0 else order[::-1]:
                    wall, cpu = await _timed(calls, call)
                    samples[way].append(wall)
                    samples[f"{way}_cpu"].append(cpu)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per way and round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--case", action="append", help="only these cases (repeatable)")
    args = parser.parse_args()
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as base:
        url = f"{base}/v1"
        print(
            f"{'case':<18}{'direct ms':>11}{'hosted ms':>11}{'ratio':>7}"
            f"{'direct cpu':>12}{'hosted cpu':>12}{'ratio':>7}"
        )
        for case in CASES:
            if args.case and case.name not in args.case:
                continue
            s = asyncio.run(bench_case(case, url, args.calls, args.rounds))
            mean = {k: sum(v) / len(v) * 1000 for k, v in s.items()}
            print(
                f"{case.name:<18}{mean['direct']:>11.2f}{mean['hosted']:>11.2f}"
                f"{mean['hosted'] / mean['direct']:>7.2f}{mean['direct_cpu']:>12.2f}"
                f"{mean['hosted_cpu']:>12.2f}{mean['hosted_cpu'] / mean['direct_cpu']:>7.2f}"
            )


if __name__ == "__main__":
    main()
