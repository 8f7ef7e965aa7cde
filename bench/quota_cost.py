"""What the quota guard costs a request: in process, and with a real Redis.

Drives :class:`~agenthost.app.quotas.QuotaGuard` in front of an ASGI app that
answers at once, with limits so high nothing is refused: a ``GET`` (the rate
alone) and a run-starting ``POST`` (rate, tokens of the day and a run slot,
taken and given back). Prints wall and CPU µs per request, against the same
app with no guard. Redis is a ``redis-server`` started on a free port (as
the tests start it), so ``redis-server`` must be on the ``PATH``.

    .venv/bin/python -m bench.quota_cost [--requests 20000] [--redis-requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.responses import Response

from agenthost.app.quota_store import LocalQuotaStore, QuotaStore, RedisQuotaStore
from agenthost.app.quotas import Limits, QuotaGuard, Quotas
from agenthost.app.redis_client import redis_client
from tests.stores import RedisServer

RATE = Limits(requests_per_minute=10**9)
EVERY = Limits(requests_per_minute=10**9, concurrent_runs=10**6, tokens_per_day=10**12)


async def answer(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def error_for(path: str, status: int, message: str, code: str) -> Response:
    return Response(message, status)


async def per_request(app: Any, requests: int, method: str) -> tuple[float, float]:
    """(wall µs, CPU µs) per request of ``app``, after 200 to warm up."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        return None

    scope = {"type": "http", "path": "/v1/chat/completions", "method": method, "headers": []}
    for _ in range(200):
        await app({**scope, "state": {"principal": "alice"}}, receive, send)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(requests):
        await app({**scope, "state": {"principal": "alice"}}, receive, send)
    return (
        (time.perf_counter() - wall) / requests * 1e6,
        (time.process_time() - cpu) / requests * 1e6,
    )


async def guarded(store: QuotaStore, limits: Limits, requests: int, method: str) -> str:
    guard = QuotaGuard(answer, quotas=Quotas(limits, store), error_for=error_for)
    wall, cpu = await per_request(guard, requests, method)
    return f"{wall:8.1f} µs wall {cpu:8.1f} µs CPU"


async def main(requests: int, redis_requests: int) -> None:
    wall, cpu = await per_request(answer, requests, "GET")
    print(f"no guard                   {wall:8.1f} µs wall {cpu:8.1f} µs CPU")
    for name, limits, method in (("GET, rate", RATE, "GET"), ("POST, all three", EVERY, "POST")):
        print(f"in process {name:16}", await guarded(LocalQuotaStore(), limits, requests, method))
    with tempfile.TemporaryDirectory() as folder:
        server = RedisServer(Path(folder))
        server.start()
        try:
            for name, limits, method in (
                ("GET, rate", RATE, "GET"),
                ("POST, all three", EVERY, "POST"),
            ):
                store = RedisQuotaStore(redis_client(server.url, timeout=2), timeout=2)
                try:
                    print(f"Redis {name:21}", await guarded(store, limits, redis_requests, method))
                finally:
                    await store.aclose()
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--redis-requests", type=int, default=3_000)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.redis_requests))
