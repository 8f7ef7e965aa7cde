"""The body bytes of every request in flight together are bounded (the OOM of
issue 17: memory follows the large bodies in flight, a few times each body),
and fairly: per key (else per client address), and past the ceiling the
owners holding the most wait (issue 34: one key got every other key a 503).

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

from agenthost.app.guards import APIKeyGuard, BodyLimitGuard

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


def _guarded(
    release: asyncio.Event, budget: int, per_owner: int = 0
) -> tuple[BodyLimitGuard, Seen]:
    seen = Seen()

    async def hold(request: Request) -> Response:
        body = await request.body()
        await seen.add(len(body))
        await release.wait()
        return JSONResponse({"bytes": len(body)})

    def error_for(path: str, status: int, message: str, code: str) -> Response:
        return Response(orjson.dumps({"error": {"message": message, "code": code}}), status)

    app = Starlette(routes=[Route("/hold", hold, methods=["POST"])])
    guard = BodyLimitGuard(
        app,
        max_bytes=8 * MB,
        error_for=error_for,
        max_in_flight_bytes=budget,
        max_owner_bytes=per_owner,
    )
    return guard, seen


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


ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789ab"


def _keyed(
    release: asyncio.Event, *, budget: int, per_owner: int
) -> tuple[APIKeyGuard, BodyLimitGuard, Seen]:
    """The guard behind the API key guard (as the app stacks them), keys for alice and bob."""
    guard, seen = _guarded(release, budget, per_owner)
    keyed = APIKeyGuard(
        guard,
        principals={ALICE: "alice", BOB: "bob"},
        public=(),
        error_for=guard.error_for,
    )
    return keyed, guard, seen


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_a_key_past_its_own_budget_gets_429_and_another_key_is_served() -> None:
    release = asyncio.Event()
    app, guard, seen = _keyed(release, budget=0, per_owner=5 * MB)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        first = asyncio.create_task(
            client.post("/hold", content=b"a" * (3 * MB), headers=_as(ALICE))
        )
        await seen.reach(1)
        refused = await client.post("/hold", content=b"a" * (3 * MB), headers=_as(ALICE))
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["code"] == "too_many_requests"
        bobs = [
            asyncio.create_task(client.post("/hold", content=b"b" * (2 * MB), headers=_as(BOB)))
            for _ in range(2)
        ]
        await seen.reach(3)  # bob's two bodies are in: alice's budget is not his
        assert guard.held == {"principal alice": 3 * MB, "principal bob": 4 * MB}
        release.set()
        assert [(await task).status_code for task in (first, *bobs)] == [200, 200, 200]
        assert guard.in_flight_bytes == 0 and not guard.held


async def test_past_the_ceiling_only_keys_under_an_equal_share_get_in() -> None:
    release = asyncio.Event()
    app, guard, seen = _keyed(release, budget=8 * MB, per_owner=0)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:

        def post(key: str, size: int) -> asyncio.Task[httpx.Response]:
            return asyncio.create_task(client.post("/hold", content=b"x" * size, headers=_as(key)))

        held = [post(ALICE, 3 * MB), post(ALICE, 3 * MB)]
        await seen.reach(2)
        # 9 MB would pass the 8 MB ceiling and alice holds more than her share (all of it).
        over = await client.post("/hold", content=b"a" * (3 * MB), headers=_as(ALICE))
        assert over.status_code == 503
        assert over.json()["error"]["code"] == "server_busy"
        held += [post(BOB, 3 * MB)]  # bob's first body: always let in
        await seen.reach(3)
        held += [post(BOB, MB)]  # over the ceiling, but bob holds 4 MB of his 8/2 share
        await seen.reach(4)
        over = await client.post("/hold", content=b"a" * MB, headers=_as(ALICE))
        assert over.status_code == 503  # alice holds 6 MB, over her share: she waits
        assert guard.held == {"principal alice": 6 * MB, "principal bob": 4 * MB}
        release.set()
        assert [(await task).status_code for task in held] == [200] * 4
        assert guard.in_flight_bytes == 0 and not guard.held


async def test_without_a_key_each_client_address_has_its_own_budget() -> None:
    release = asyncio.Event()
    guard, seen = _guarded(release, budget=0, per_owner=5 * MB)
    one = httpx.ASGITransport(app=guard, client=("192.0.2.1", 40000))
    two = httpx.ASGITransport(app=guard, client=("192.0.2.2", 40000))
    async with (
        httpx.AsyncClient(transport=one, base_url="http://localhost") as first,
        httpx.AsyncClient(transport=two, base_url="http://localhost") as second,
    ):
        held = asyncio.create_task(first.post("/hold", content=b"a" * (3 * MB)))
        await seen.reach(1)
        assert (await first.post("/hold", content=b"a" * (3 * MB))).status_code == 429
        other = asyncio.create_task(second.post("/hold", content=b"b" * (3 * MB)))
        await seen.reach(2)
        assert guard.held == {"address 192.0.2.1": 3 * MB, "address 192.0.2.2": 3 * MB}
        release.set()
        assert [(await task).status_code for task in (held, other)] == [200, 200]
