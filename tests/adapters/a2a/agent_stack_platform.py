"""A small fake of Agent Stack's provider API (the endpoints self-registration calls),
for the registration tests: the platform itself is a Kubernetes deployment of many
services, not installable in a test."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


class FakePlatform:
    """Agent Stack's provider endpoints the SDK's self-registration calls; ``status``
    (when set) is the answer to every call, to act a failing platform."""

    def __init__(self) -> None:
        self.providers: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str | None, Any]] = []
        self.status: int | None = None
        self.app = Starlette(
            routes=[
                Route("/api/v1/providers/by-location/{location:path}", self.by_location),
                Route("/api/v1/providers", self.create, methods=["POST"]),
                Route("/api/v1/providers/{id}", self.patch, methods=["PATCH"]),
            ]
        )

    async def _record(self, request: Request) -> Any:
        body = await request.json() if request.method != "GET" else None
        path = unquote(request.url.path)
        self.calls.append((request.method, path, request.headers.get("authorization"), body))
        return body

    async def by_location(self, request: Request) -> Response:
        await self._record(request)
        if self.status:
            return JSONResponse({"detail": "down"}, self.status)
        where = unquote(request.path_params["location"])
        found = [p for p in self.providers.values() if p["location"] == where]
        return JSONResponse(found[0]) if found else JSONResponse({"detail": "none"}, 404)

    async def create(self, request: Request) -> Response:
        body = await self._record(request)
        if self.status:
            return JSONResponse({"detail": "refused"}, self.status)
        provider = {"id": f"p-{len(self.providers) + 1}", **body}
        self.providers[provider["id"]] = provider
        return JSONResponse(provider, 201)

    async def patch(self, request: Request) -> Response:
        body = await self._record(request)
        provider = self.providers[request.path_params["id"]]
        provider.update(body)
        return JSONResponse(provider)


def registered_card(fake: FakePlatform, timeout: float = 30) -> dict[str, Any]:
    """The card of the first provider ``fake`` was given (waited for: registration runs
    in the background of the server's start)."""
    deadline = time.monotonic() + timeout
    while not fake.providers:
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing registered in {timeout} s: {fake.calls}")
        time.sleep(0.05)
    card: dict[str, Any] = next(iter(fake.providers.values()))["agent_card"]
    return card
