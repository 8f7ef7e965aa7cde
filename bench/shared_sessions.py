"""The shared conversation namespace's cost per turn: a protocol's own store vs the router.

With ``AGENTHOST_SESSIONS=shared`` an adapter's sessions go through
:class:`~agenthost.app.shared_sessions.SessionRouter`, which stamps each
message with its protocol and, for an id that is not a canonical UUID (the
case measured: 32-hex ids), writes the conversation's UUID alias with each
append. Same turns as ``bench/redis_sessions.py`` (load the history, append
a user message and an answer), side by side in one run, on the in-process
store and on a redis-server it starts.

    .venv/bin/python bench/shared_sessions.py [--conversations 200] [--turns 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

from redis_sessions import redis_server, turns  # type: ignore[import-not-found]

from agenthost.app.memory import LRUMemoryManager
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from agenthost.app.shared_sessions import SessionRouter


async def measure(port: int, conversations: int, count: int) -> None:
    client = redis_client(f"redis://127.0.0.1:{port}/0", timeout=5)

    def lru(namespace: str) -> LRUMemoryManager:
        return LRUMemoryManager(namespace, max_sessions=100_000, ttl=3600)

    def redis(namespace: str) -> RedisMemoryManager:
        return RedisMemoryManager(client, namespace, ttl=3600)

    n = conversations * count
    print(f"{conversations} conversations x {count} turns (load + append 2 messages)")
    print(f"{'store':<8}{'path':<10}{'CPU/turn (us)':>16}{'median latency (us)':>22}")
    for name, new in (("lru", lru), ("redis", redis)):
        results = {}
        for path in ("own", "shared"):
            own = new("a2a")
            memory = (
                own
                if path == "own"
                else SessionRouter(own, new("conv"), frozenset({"bench"}), "a2a")
            )
            await turns(memory, 20, 3)  # warm up
            cpu, latencies = await turns(memory, conversations, count)
            results[path] = cpu / n
            median = statistics.median(latencies) * 1e6
            print(f"{name:<8}{path:<10}{cpu / n * 1e6:>16.0f}{median:>22.0f}")
        print(f"{name}: shared / own CPU per turn: {results['shared'] / results['own']:.2f}x")
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    with redis_server() as (port, _):
        asyncio.run(measure(port, args.conversations, args.turns))


if __name__ == "__main__":
    main()
