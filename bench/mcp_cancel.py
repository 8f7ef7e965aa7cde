"""How long an MCP cancel takes to stop the run: cancel sent → upstream stream closed.

Runs agenthost (uvicorn in a thread) with one agent relaying to the fake
OpenAI upstream of the tests (``tests/upstream.py``, another thread), whose
``slow`` model streams a word every 50 ms for 10 s. Each round starts a
``tools/call``, waits for its first progress notification, cancels it and
times until the upstream sees its stream left before the end. Ways of
cancelling, side by side:

- ``stateless-notification``: a ``notifications/cancelled`` POST of its own
  (the call's stream stays open), stateless mode;
- ``stateful-notification``: the same in a handshake-era session;
- ``stateless-close``: the client closes the call's stream.

Usage: ``.venv/bin/python -m bench.mcp_cancel [--rounds 20]``. The goal is
< 100 ms; the upstream is polled every millisecond.
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio
import httpx

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.upstream import FakeUpstream, serve_in_thread

ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def call(request_id: int) -> dict[str, object]:
    params = {"name": "relay", "arguments": {"message": "go"}, "_meta": {"progressToken": "p"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def until_abandoned(fake: FakeUpstream, count: int) -> float:
    start = time.perf_counter()
    while fake.abandoned < count:
        await anyio.sleep(0.001)
        if time.perf_counter() - start > 10:
            raise RuntimeError("the run did not stop within 10 s")
    return time.perf_counter()


async def one_round(fake: FakeUpstream, client: httpx.AsyncClient, way: str, n: int) -> float:
    headers: dict[str, str] = {}
    if way == "stateful-notification":
        opened = await client.post("/mcp", json=INITIALIZE)
        headers = {"mcp-session-id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post("/mcp", json=done, headers=headers)
    before = fake.abandoned
    async with client.stream("POST", "/mcp", json=call(n), headers=headers) as stream:
        async for line in stream.aiter_lines():
            if "notifications/progress" in line:
                break
        sent = time.perf_counter()
        if way == "stateless-close":
            await stream.aclose()
        else:
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
            cancel["params"] = {"requestId": n}  # type: ignore[assignment]
            await client.post("/mcp", json=cancel, headers=headers)
        stopped = await until_abandoned(fake, before + 1)
    return (stopped - sent) * 1000


async def measure(way: str, rounds: int, upstream_url: str, fake: FakeUpstream) -> list[float]:
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0))
    settings = Settings(adapters=["mcp"], mcp_stateless=way != "stateful-notification")
    with serve_in_thread(create_app(settings, {"relay": agent}), lifespan=True) as url:
        async with httpx.AsyncClient(base_url=url, headers=ACCEPT, timeout=30) as client:
            return [await one_round(fake, client, way, n + 1) for n in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as upstream:
        for way in ("stateless-notification", "stateful-notification", "stateless-close"):
            times = anyio.run(measure, way, args.rounds, f"{upstream}/v1", fake)
            print(
                f"{way:24} cancel → upstream closed: median {statistics.median(times):6.1f} ms, "
                f"max {max(times):6.1f} ms over {len(times)} rounds"
            )


if __name__ == "__main__":
    main()
