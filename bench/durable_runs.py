"""What the run log costs: a streamed run consumed directly vs through the log.

Side by side in one run, in this process (no HTTP: the log's own cost):

- **direct**: today's streamed path, and what every non-background request
  still does: ``agent.run_stream`` consumed by the Responses encoder
  (:class:`ResponseEvents`), chunk by chunk.
- **log, in process**: the same run started as a background response's is
  (:class:`DurableRuns` on a :class:`LocalRunLog`): its task writes every
  update to the log, and a follower replays it through the same encoder.
- **log, Redis**: the same on :class:`RedisRunLog` against a real
  redis-server (started here on a free port); the follower on the owning
  replica reads what Redis has written (batched writes).

Prints CPU µs per chunk (this process; Redis's own CPU apart), the ratios to
direct, end-to-end time per run, and, for Redis, the chunks per round trip
of the batched writer with ``--concurrent`` streams at once.

    .venv/bin/python bench/durable_runs.py [--runs 200] [--chunks 200] [--concurrent 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from redis_sessions import redis_server

from agenthost.adapters.durable import DurableRuns, LocalRunLog, RunLog, RunRecord
from agenthost.adapters.openai.background import (
    PROTOCOL,
    BackgroundResponses,
    _view,
)
from agenthost.adapters.openai.responses_stream import ResponseEvents
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.store import ConversationStore, ResponseStore
from agenthost.adapters.openai.turns import Stores, prepare
from agenthost.agents import ChatAgent, Message, TextDelta
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agenthost.agents.results import Usage
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.redis_memory import redis_client
from agenthost.app.redis_runs import RedisRunLog


class Chunks(BaseChatModel):
    """``count`` word chunks, ``pause`` seconds apart (0: one loop turn apart)."""

    name = "chunks"

    def __init__(self, count: int, pause: float = 0.0) -> None:
        self.count, self.pause = count, pause

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        for i in range(self.count):
            # Each chunk arrives on its own, as from an upstream server (the loop runs between).
            await asyncio.sleep(self.pause)
            yield TextDelta(f"w{i} ")
        yield ModelResponse(Message.assistant("x"), Usage(1, self.count, 1))


def _stores() -> Stores:
    memory = LRUMemoryManager("bench", max_sessions=100_000, ttl=3600)
    return Stores(ResponseStore(memory), ConversationStore(memory))


async def direct(agent: ChatAgent, stores: Stores, runs: int) -> float:
    body = ResponseRequest(model=agent.name, input="go", stream=True)
    start = time.process_time()
    for _ in range(runs):
        prepared = await prepare(body, agent, stores, "p", id=f"resp_{uuid.uuid4().hex}")
        turn = prepared.turn
        updates = agent.run_stream(
            prepared.messages, session=prepared.session, options=turn.options
        )
        async for _ in ResponseEvents(agent.name, turn).stream(updates):
            pass
    return time.process_time() - start


async def logged(agent: ChatAgent, stores: Stores, log: RunLog, runs: int) -> float:
    durable = DurableRuns(log, lease_seconds=30)
    durable.handle(PROTOCOL, BackgroundResponses({agent.name: agent}, stores))
    await log.start()
    body = ResponseRequest(model=agent.name, input="go", stream=True, background=True)
    start = time.process_time()
    for _ in range(runs):
        prepared = await prepare(body, agent, stores, "p", id=f"resp_{uuid.uuid4().hex}")
        turn = prepared.turn
        request = {"body": body.model_dump(mode="json", exclude_unset=True), "items": turn.input}
        request["created_at"] = turn.created_at
        await durable.start(RunRecord(turn.id, PROTOCOL, agent.name, "p", request))
        async for _ in _view(durable, turn, None):
            pass
    took = time.process_time() - start
    await log.aclose()
    return took


async def concurrent(
    log: RedisRunLog, stores: Stores, streams: int, chunks: int
) -> dict[str, float]:
    agent = ChatAgent("paced", Chunks(chunks, pause=0.01))
    durable = DurableRuns(log, lease_seconds=30)
    durable.handle(PROTOCOL, BackgroundResponses({agent.name: agent}, stores))
    await log.start()
    body = ResponseRequest(model=agent.name, input="go", background=True)
    before = log.batches
    started = time.monotonic()

    async def one() -> None:
        prepared = await prepare(body, agent, stores, "p", id=f"resp_{uuid.uuid4().hex}")
        turn = prepared.turn
        request = {"body": body.model_dump(mode="json", exclude_unset=True), "items": turn.input}
        request["created_at"] = turn.created_at
        await durable.start(RunRecord(turn.id, PROTOCOL, agent.name, "p", request))
        async for _ in durable.follow(turn.id):
            pass

    await asyncio.gather(*(one() for _ in range(streams)))
    wall = time.monotonic() - started
    trips = log.batches - before
    await log.aclose()
    return {"events": streams * (chunks + 1), "round_trips": trips, "wall": wall}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    agent = ChatAgent("chunks", Chunks(args.chunks))
    chunks = args.runs * args.chunks
    with redis_server() as (port, _):
        url = f"redis://127.0.0.1:{port}/0"
        results: dict[str, list[float]] = {"direct": [], "log, in process": [], "log, Redis": []}
        await direct(agent, _stores(), 20)  # warm-up
        for _ in range(args.rounds):
            results["direct"].append(await direct(agent, _stores(), args.runs))
            results["log, in process"].append(
                await logged(agent, _stores(), LocalRunLog(), args.runs)
            )
            client = redis_client(url, timeout=2.0)
            redis_log = RedisRunLog(client, retention=600)
            results["log, Redis"].append(await logged(agent, _stores(), redis_log, args.runs))
            await client.aclose()
        base = min(results["direct"])
        print(
            f"{args.runs} runs x {args.chunks} chunks, best of {args.rounds} (CPU of this process)"
        )
        print(f"{'path':<18}{'µs/chunk':>10}{'ratio':>8}")
        for name, seconds in results.items():
            best = min(seconds)
            print(f"{name:<18}{best / chunks * 1e6:>10.2f}{best / base:>8.2f}")
        client = redis_client(url, timeout=5.0)
        stats = await concurrent(
            RedisRunLog(client, retention=600, timeout=5.0), _stores(), args.concurrent, 50
        )
        await client.aclose()
        print(
            f"{args.concurrent} concurrent background streams x 50 chunks on Redis: "
            f"{stats['events']:.0f} events in {stats['round_trips']:.0f} round trips "
            f"({stats['events'] / max(1, stats['round_trips']):.0f} events per trip), "
            f"{stats['wall']:.1f} s"
        )
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
