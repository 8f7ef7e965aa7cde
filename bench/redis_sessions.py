"""Sessions in Redis vs the in-process LRU: CPU and latency per turn, bytes per conversation.

Starts its own redis-server on a free 127.0.0.1 port in a temporary folder.
A "turn" is what a run does with its session: load the history, then
append the user's message and the answer (20 messages = 10 turns). Both
stores run the same turns, side by side in one run, in this process;
agenthost's CPU is this process's, Redis's own CPU is read from /proc.

    .venv/bin/python bench/redis_sessions.py [--conversations 200] [--turns 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from agenthost.agents import Message, SessionKey
from agenthost.agents.sessions import ManagedSession
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.redis_memory import RedisMemoryManager, redis_client

USER = "Could you summarise the quarterly report in three sentences, focusing on revenue?"
ANSWER = (
    "Revenue grew 12% year on year to 4.1 million, driven by the new subscription tier. "
    "Costs rose 5%, mostly hosting. The outlook for next quarter is flat."
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def turns(memory: object, conversations: int, count: int) -> tuple[float, list[float]]:
    """(CPU seconds of this process, wall seconds of each turn)."""
    keys = [SessionKey("bench", uuid.uuid4().hex, "alice") for _ in range(conversations)]
    latencies = []
    started = time.process_time()
    for turn in range(count):
        for key in keys:
            t0 = time.perf_counter()
            session = ManagedSession(memory, key)  # type: ignore[arg-type]
            history = await session.load()
            assert len(history) == 2 * turn
            await session.append([Message.user(USER), Message.assistant(ANSWER)])
            latencies.append(time.perf_counter() - t0)
    return time.process_time() - started, latencies


async def measure(port: int, pid: int, conversations: int, count: int) -> None:
    client = redis_client(f"redis://127.0.0.1:{port}/0", timeout=5)
    redis = RedisMemoryManager(client, "bench", ttl=3600)
    lru = LRUMemoryManager("bench", max_sessions=100_000, ttl=3600)
    n = conversations * count
    results = {}
    for name, memory in (("lru", lru), ("redis", redis)):
        await turns(memory, 20, 3)  # warm up
        redis_before = cpu_of(pid)
        cpu, latencies = await turns(memory, conversations, count)
        redis_cpu = cpu_of(pid) - redis_before
        results[name] = (cpu / n, statistics.median(latencies), redis_cpu / n)
    key = SessionKey("bench", uuid.uuid4().hex, "alice")
    for _ in range(10):
        await redis.append(key, [Message.user(USER), Message.assistant(ANSWER)])
    size = 0
    for name in redis._keys(key):
        size += int(await client.memory_usage(name) or 0)
    text = (len(USER) + len(ANSWER)) * 10
    await redis.aclose()
    print(f"{conversations} conversations x {count} turns (load + append 2 messages)")
    print(f"{'store':<8}{'CPU/turn (us)':>16}{'median latency (us)':>22}{'redis CPU/turn':>18}")
    for name, (cpu, latency, server_cpu) in results.items():
        print(f"{name:<8}{cpu * 1e6:>16.0f}{latency * 1e6:>22.0f}{server_cpu * 1e6:>18.0f}")
    print(f"agenthost CPU per turn, redis / lru: {results['redis'][0] / results['lru'][0]:.1f}x")
    print(f"redis bytes per 20-message conversation (MEMORY USAGE, 2 keys): {size}")
    print(f"  text in it: {text} bytes; overhead {size / text:.2f}x the text")


@contextmanager
def redis_server() -> Iterator[tuple[int, int]]:
    """A redis-server on a free port of 127.0.0.1 in a temp dir: (port, pid)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", ""],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            yield port, server.pid
        finally:
            server.terminate()
            server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    with redis_server() as (port, pid):
        asyncio.run(measure(port, pid, args.conversations, args.turns))


if __name__ == "__main__":
    main()
