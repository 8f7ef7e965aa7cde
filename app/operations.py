"""The operations routes: ``/healthz`` (alive), ``/readyz`` (ready to serve), ``/metrics``."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI
from starlette.responses import Response

from agenthost.adapters.base import Adapter, HasStoreHealth
from agenthost.app.host import Host
from agenthost.app.metrics import metrics_endpoint
from agenthost.app.warm_up import warm_up


def add_operations(app: FastAPI, host: Host, adapters: dict[str, Adapter]) -> None:
    """Add the health, readiness and (when counted) metrics routes to ``app``."""

    @app.get("/healthz", tags=["operations"], summary="Alive")
    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    @app.get(
        "/readyz",
        tags=["operations"],
        summary="Ready to serve (503 while starting or draining)",
    )
    async def readyz() -> Response:
        ready, body = await readiness(host, adapters, bool(app.state.ready))
        if ready:  # a served process builds its deferred adapters now (server.warm_up)
            warm_up(app)
        return Response(orjson.dumps(body), 200 if ready else 503, media_type="application/json")

    if host.metrics is not None:
        endpoint = metrics_endpoint(host.metrics)
        app.add_route("/metrics", endpoint, ["GET"], include_in_schema=False)


async def readiness(
    host: Host, adapters: dict[str, Adapter], ready: bool
) -> tuple[bool, dict[str, Any]]:
    """Whether the replica is ready, and ``/readyz``'s body: its stores and resources."""
    registry = host.registry
    body: dict[str, Any] = {"status": "ready" if ready else "starting", "agents": len(registry)}
    stores = await host.store_health()
    sessions_never_up = stores.get("session_store") == "down" and not host.store_seen_up
    tasks_never_up = False
    for adapter in adapters.values():
        # A store an adapter prepares at start-up (A2A's task tables).
        if isinstance(adapter, HasStoreHealth):
            stores.update(await adapter.store_health())
            # Down since start: not ready; down later: degraded, kept in rotation.
            tasks_never_up |= not adapter.store_seen_up
    if stores:
        body["stores"] = stores
        if sessions_never_up or tasks_never_up:
            ready, body["status"] = False, "store_unavailable"
        elif ready and "down" in stores.values():
            body["status"] = "degraded"
    for resource in registry.resources:
        # An optional part that is down (e.g. an MCP server) degrades the
        # service without taking the replica out of rotation.
        health = body[resource.name] = dict(resource.health())
        if ready and any(state != "up" for state in health.values()):
            body["status"] = "degraded"
    return ready, body
