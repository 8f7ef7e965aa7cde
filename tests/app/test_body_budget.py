"""The body bytes of every request in flight together are bounded (the OOM of
issue 17: memory follows the large bodies in flight, a few times each body).

The guard is ASGI middleware; it runs here around a small app whose endpoint
holds its request open until the test lets it go, through httpx's ASGI
transport (no server needed, nothing mocked)."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agenthost.app.guards import BodyLimitGuard

pytestmark = pytest.mark.anyio

MB = 1024 * 1024


class Seen:
    """The body sizes the app received, waited for by count."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.changed = asyncio.Condition()

    async def add(self, size: int) -> None:
        async with self.changed:
            self.sizes.append(size)
            self.changed.notify_all()

    async def reach(self, count: int) -> None:
        async with self.changed:
            await self.changed.wait_for(lambda: len(self.sizes) >= count)


def _guarded(release: asyncio.Event, budget: int) -> tuple[BodyLimitGuard, Seen]:
    seen = Seen()

    async def hold(request: Request) -> Response:
        body = await request.body()
        await seen.add(len(body))
        await release.wait()
        return JSONResponse({"bytes": len(body)})

    def error_for(path: str, status: int, message: str, code: str) -> Response:
        return Response(orjson.dumps({"error": {"message": message, "code": code}}), status)

    app = Starlette(routes=[Route("/hold", hold, methods=["POST"])])
    return BodyLimitGuard(
        app, max_bytes=8 * MB, error_for=error_for, max_in_flight_bytes=budget
    ), seen


async def test_a_body_past_the_in_flight_budget_waits_for_the_others_to_end() -> None:
    release = asyncio.Event()
    guard, seen = _guarded(release, budget=5 * MB)
    transport = httpx.ASGITransport(app=guard)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        first = asyncio.create_task(client.post("/hold", content=b"a" * (3 * MB)))
        await seen.reach(1)  # the first body is in and held
        refused = await client.post("/hold", content=b"b" * (3 * MB))
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["code"] == "server_busy"
        assert "in flight" in refused.json()["error"]["message"]
        assert seen.sizes == [3 * MB]  # the refused body never reached the app
        release.set()
        assert (await first).json() == {"bytes": 3 * MB}
        assert guard.in_flight_bytes == 0
        # Once the first has ended the same body is taken.
        again = await client.post("/hold", content=b"b" * (3 * MB))
        assert again.status_code == 200
        assert guard.in_flight_bytes == 0


async def test_a_streamed_body_is_counted_as_it_arrives() -> None:
    release = asyncio.Event()
    guard, seen = _guarded(release, budget=5 * MB)
    transport = httpx.ASGITransport(app=guard)

    async def chunks() -> object:
        for _ in range(4):
            yield b"c" * MB

    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        first = asyncio.create_task(client.post("/hold", content=b"a" * (3 * MB)))
        await seen.reach(1)
        refused = await client.post("/hold", content=chunks())  # no Content-Length
        assert refused.status_code == 503
        release.set()
        assert (await first).status_code == 200
        assert guard.in_flight_bytes == 0


async def test_one_body_alone_always_passes_and_zero_is_no_bound() -> None:
    release = asyncio.Event()
    release.set()
    guard, _ = _guarded(release, budget=1 * MB)
    transport = httpx.ASGITransport(app=guard)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        alone = await client.post("/hold", content=b"a" * (3 * MB))
        assert alone.status_code == 200  # over the budget, but nothing else in flight
    release = asyncio.Event()
    unbounded, seen = _guarded(release, budget=0)
    transport = httpx.ASGITransport(app=unbounded)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        held = [
            asyncio.create_task(client.post("/hold", content=b"a" * (3 * MB))) for _ in range(3)
        ]
        await seen.reach(3)
        assert unbounded.in_flight_bytes == 9 * MB
        release.set()
        assert [(await task).status_code for task in held] == [200, 200, 200]
        assert unbounded.in_flight_bytes == 0
