"""The A2A POST routes in the app's fast lane answer as FastAPI's routes do.

A request under a ``root_path`` skips the lane (``app/lanes.py``) and goes
through FastAPI's route matching, so the same requests sent both ways must
get the same answers: statuses, media types, bodies (ids aside).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from agenthost.adapters.a2a.adapter import A2AAdapter
from agenthost.adapters.base import AdapterContext
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.server import create_app
from tests.adapters.a2a.support import V1, a2a_settings, rpc
from tests.principals import KEYS, bearer

pytestmark = pytest.mark.anyio

AGENTS = {
    "echo": ChatAgent("echo", EchoModel()),
    "twin": ChatAgent("twin", EchoModel()),
}
MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello there"}]}


@asynccontextmanager
async def both_ways() -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients for the lane (no root_path) and for FastAPI's routes (root_path ``/x``)."""
    settings = a2a_settings(api_keys=[f"{name}:{key}" for name, key in KEYS.items()])
    app = create_app(settings, AGENTS, allow={"twin": frozenset({"alice"})})
    async with LifespanManager(app) as manager:
        lane = httpx.ASGITransport(app=manager.app)
        routed = httpx.ASGITransport(app=manager.app, root_path="/x")
        async with (
            httpx.AsyncClient(transport=lane, base_url="http://localhost") as fast,
            httpx.AsyncClient(transport=routed, base_url="http://localhost/x") as slow,
        ):
            yield fast, slow


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: "<id>"
            if k in ("id", "taskId", "contextId", "artifactId", "messageId", "timestamp")
            else _without_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _answer(response: httpx.Response) -> tuple[int, str, Any]:
    body = response.json() if response.content else None
    return response.status_code, response.headers.get("content-type", ""), _without_ids(body)


def test_every_agent_has_its_hot_post_routes_in_the_lane() -> None:
    # A name that is not one path segment never matches the router's {agent}: not in the lane.
    agents = {**AGENTS, "team/x": ChatAgent("team/x", EchoModel())}
    context = AdapterContext(agents=agents, memory=LRUMemoryManager("a2a", max_sessions=10, ttl=60))
    routes = A2AAdapter(context).asgi_routes
    assert set(routes) == {
        ("POST", f"/{name}{suffix}")
        for name in AGENTS
        for suffix in ("", "/message:send", "/message:stream")
    }


async def test_the_lane_answers_as_the_routed_app_does() -> None:
    alice = {**V1, **bearer("alice")}
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/a2a/echo/message:send", {"json": {"message": MESSAGE}}),
        ("/a2a/echo/message:send", {"content": b"{oops"}),
        ("/a2a/echo/message:send", {"content": b"\xff\xfe"}),
        ("/a2a/echo/message:send", {"json": {"message": {"role": "ROLE_USER"}}}),
        ("/a2a/echo", {"json": rpc("SendMessage", {"message": MESSAGE})}),
        ("/a2a/echo", {"content": b"{not json"}),
        ("/a2a/echo", {"json": rpc("NoSuchMethod", {})}),
        ("/a2a/echo", {"json": rpc("GetTask", {"id": "nope"})}),
        ("/a2a/nobody", {"json": rpc("GetTask", {"id": "nope"})}),
        ("/a2a/nobody/message:send", {"json": {"message": MESSAGE}}),
    ]
    typed = {**alice, "content-type": "application/json"}  # raw bodies, declared as clients do
    async with both_ways() as (fast, slow):
        for path, kwargs in requests:
            lane = await fast.post(path, headers=typed, **kwargs)
            routed = await slow.post(path, headers=typed, **kwargs)
            assert _answer(lane) == _answer(routed), path
        # An agent another key may use is unknown to this one, both ways.
        bob = {**V1, **bearer("bob")}
        for client in (fast, slow):
            refused = await client.post(
                "/a2a/twin/message:send", json={"message": MESSAGE}, headers=bob
            )
            assert refused.status_code == 404
        # A stream, both ways: the same events in the same order.
        events = []
        for client in (fast, slow):
            async with client.stream(
                "POST", "/a2a/echo/message:stream", json={"message": MESSAGE}, headers=alice
            ) as stream:
                assert stream.status_code == 200
                events.append([line async for line in stream.aiter_lines() if line])
        assert [_event_kinds(e) for e in events] == [_event_kinds(events[0])] * 2
        assert len(events[0]) >= 3


def _event_kinds(lines: list[str]) -> list[str]:
    import orjson

    return [
        next(iter(orjson.loads(line.removeprefix("data:"))))
        for line in lines
        if line.startswith("data:")
    ]
