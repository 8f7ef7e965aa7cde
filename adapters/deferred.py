"""An adapter built on its protocol's first request, so that start-up does not import its SDK.

A protocol SDK can cost more to import than the rest of the server (the MCP
SDK builds two protocol revisions' pydantic models): :class:`DeferredAdapter`
stands in for the real adapter from start-up. It answers at once — the app
mounts its router, uses its error shape and request rules, and ``/readyz``
is ready — and the first request under its prefix builds the real adapter:
the build (its imports) runs in a worker thread while the event loop keeps
serving, the adapter's lifespan is entered in a task of the stand-in's own
lifespan (left when the app stops), and every request is then handed to the
real adapter's routes. Concurrent first requests wait for the same build; a
build that fails fails its request (the app's 500) and the next request
tries again. A served process starts the build itself as soon as it accepts
connections (:meth:`DeferredAdapter.warm_up`, after ``/readyz`` is ready), so
that the first request usually finds it built, or waits for the build under
way: off the start-up path, not on the first request.

What the app reads of an adapter before its first request must therefore be
known without the SDK: the stand-in is given its name, ``at_bare_prefix``,
request rules and error shape. It has no root routes, no store health and no
bounded stores, and its routes are not in ``/openapi.json``; a protocol with
any of those, or with durable runs to resume from other replicas, is built
at start-up instead (its package's ``create`` decides).
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import ModuleType

import anyio
import anyio.abc
from fastapi import APIRouter
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.base import Adapter, RequestRules

logger = logging.getLogger("agenthost")

ErrorResponse = Callable[[int, str, str], Response]
"""``(status, message, code)`` → the protocol's own error response."""


class DeferredAdapter:
    """Stands in for the adapter ``build()`` returns, and builds it on the first request."""

    root_router: APIRouter | None = None

    def __init__(
        self,
        name: str,
        prefix: str,
        build: Callable[[], Adapter],
        *,
        error: ErrorResponse,
        at_bare_prefix: bool = False,
        request_rules: RequestRules | None = None,
    ) -> None:
        """``build`` runs in a worker thread (it may import for seconds); ``prefix`` is
        where the app mounts this adapter."""
        self.name = name
        self.at_bare_prefix = at_bare_prefix
        self.request_rules = request_rules or RequestRules()
        self._prefix = prefix
        self._build = build
        self._error = error
        self._router = APIRouter()
        front = _Front(self)  # an ASGI app, not an endpoint: any method reaches it
        for path in ("/", "/{path:path}"):  # every path under the prefix
            self._router.routes.append(Route(path, front, include_in_schema=False))
        self._adapter: Adapter | None = None
        self._routes: ASGIApp | None = None
        self._building = anyio.Lock()
        self._group: anyio.abc.TaskGroup | None = None
        self._warming = False
        self._stop = anyio.Event()

    @property
    def router(self) -> APIRouter:
        return self._router

    @property
    def built(self) -> Adapter | None:
        """The real adapter, once a request has built it."""
        return self._adapter

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return self._error(status, message, code)

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self._stop = anyio.Event()
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                self._stop.set()  # the real adapter's lifespan, if entered, is left
        # A lifespan entered again (an app started twice) builds a fresh adapter.
        self._adapter = self._routes = None
        self._warming = False

    def warm_up(self) -> None:
        """Build the real adapter in the background now (in the lifespan; no-op if built).

        A failed build is logged, and the first request tries again."""
        if self._group is not None and self._routes is None and not self._warming:
            self._warming = True
            self._group.start_soon(self._warm)

    async def _warm(self) -> None:
        started = time.monotonic()
        try:
            await self._built()
        except _Stopped:  # shut down during the build (a process stopped at once): nothing to say
            return
        except Exception as exc:  # the first request builds it again, and answers the error
            logger.warning("%s: not built ahead of its first request: %r", self.name, exc)
            return
        finally:
            self._warming = False
        took = time.monotonic() - started
        logger.info("%s: built ahead of its first request (%.1f s)", self.name, took)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request under the prefix: to the real adapter's routes, built first if need be."""
        routes = self._routes or await self._built()
        await routes(scope, receive, send)

    async def _built(self) -> ASGIApp:
        async with self._building:
            if self._routes is not None:
                return self._routes
            if self._group is None:
                raise RuntimeError(f"the {self.name} adapter is not running (outside its lifespan)")
            adapter = await anyio.to_thread.run_sync(self._build)
            group = self._group
            if group is None:  # the lifespan ended while the thread built it
                raise _Stopped(f"the {self.name} adapter was built after its lifespan ended")
            await group.start(self._serve, adapter)
            self._adapter = adapter
            self._routes = routes_of(adapter, self._prefix)
            return self._routes

    async def _serve(
        self,
        adapter: Adapter,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with adapter.lifespan():
            task_status.started()
            await self._stop.wait()


class _Stopped(RuntimeError):
    """The adapter's lifespan ended while it was being built."""


class _Front:
    __slots__ = ("deferred",)

    def __init__(self, deferred: DeferredAdapter) -> None:
        self.deferred = deferred

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.deferred.handle(scope, receive, send)


def routes_of(adapter: Adapter, prefix: str) -> ASGIApp:
    """``adapter``'s routes under ``prefix``, as the app mounts them (``mounts.py``): its
    root route at the bare prefix too when it says so. A path none matches raises the
    404 (or 405) that the app answers in the protocol's error shape."""
    routes = APIRouter()
    routes.include_router(adapter.router, prefix=prefix)
    for route in adapter.router.routes if adapter.at_bare_prefix else ():
        if isinstance(route, Route) and route.path == "/":
            methods = list(route.methods) if route.methods else None
            routes.add_route(prefix, route.endpoint, methods, include_in_schema=False)
    return routes


async def imported(name: str) -> ModuleType:
    """Module ``name``, imported in a worker thread (the event loop goes on serving
    meanwhile): for an adapter that imports its SDK on its first request, and keeps what
    this returns. Always through the thread, so that a request arriving while another
    thread imports the module waits for the import to end (the import lock) instead of
    finding it half done in ``sys.modules``."""
    return await anyio.to_thread.run_sync(importlib.import_module, name)
