"""``create_app()``: the composition root that mounts the enabled adapters.

The pieces: the host (:mod:`agenthost.app.host`), the adapters and where they
are mounted (:mod:`agenthost.app.mounts`), the operations routes
(:mod:`agenthost.app.operations`) and the middleware stack
(:mod:`agenthost.app.middleware`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig

from agenthost.adapters.base import Adapter
from agenthost.agents import Agent
from agenthost.agents.tools.processes import TOOL_PROCESSES
from agenthost.app.docs_ui import add_docs
from agenthost.app.host import Host
from agenthost.app.identity.metadata import build_router as build_metadata_router
from agenthost.app.middleware import (
    PUBLIC_PATHS,
    PUBLIC_SUFFIXES,
    add_middleware,
    error_responder,
    handle_routing_errors,
)
from agenthost.app.mounts import build_adapters, mount_adapters
from agenthost.app.openapi_errors import document_errors
from agenthost.app.operations import add_operations
from agenthost.app.playground import build_router
from agenthost.app.settings import Settings

__all__ = ["PUBLIC_PATHS", "PUBLIC_SUFFIXES", "create_app"]

logger = logging.getLogger("agenthost")


def create_app(
    settings: Settings | None = None,
    agents: Mapping[str, Agent] | None = None,
    *,
    allow: Mapping[str, frozenset[str]] | None = None,
) -> FastAPI:
    """The ASGI app serving ``agents`` (default: built from ``settings.config``).

    ``allow`` limits agents to principals; by default it is the registry's.
    """
    host = Host(settings, agents, allow=allow)
    adapters = build_adapters(host)
    # FastAPI's own OpenTelemetry is off: app/tracing.py makes the one server span per
    # request (FastAPI's would double it under a global provider, and its checks of the
    # global providers cost every request).
    no_telemetry: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}
    app = FastAPI(
        title="agenthost",
        lifespan=_lifespan(host, adapters),
        docs_url=None,
        redoc_url=None,
        telemetry=no_telemetry,
    )
    add_docs(app)
    if host.settings.playground:
        app.include_router(build_router())
    if host.tokens is not None:
        scopes = [*host.settings.oidc_required_scopes, *allowed_scopes(host.allow)]
        app.include_router(build_metadata_router(host.tokens.issuer, scopes))
    app.state.ready = False
    app.state.host = host
    app.state.agents = host.registry
    app.state.adapters = adapters
    mount_adapters(app, adapters)
    add_operations(app, host, adapters)
    error_for = error_responder(adapters)
    handle_routing_errors(app, error_for)
    document_errors(app, error_for, auth=host.auth, public=PUBLIC_PATHS)
    add_middleware(app, host, adapters, error_for)
    return app


def _lifespan(
    host: Host, adapters: dict[str, Adapter]
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Up: the host's resources, agents and adapters; ready while inside."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _route_once(app)  # before the loop watchdog starts with the host
        async with host.running(adapters.values()):
            app.state.ready = True
            surfaces = ", ".join(f"{a.name} at {prefix}" for prefix, a in adapters.items())
            names = ", ".join(host.registry)
            count = len(host.registry)
            noun = "agent" if count == 1 else "agents"
            logger.info("serving %d %s (%s) over %s", count, noun, names, surfaces)
            if host.tokens is not None:
                logger.info(
                    "auth on: %d API keys, OIDC tokens of %s",
                    len(host.principals),
                    host.tokens.issuer,
                )
            elif host.principals:
                logger.info("auth on: %d API keys", len(host.principals))
            else:
                logger.warning("auth off: every caller is the anonymous principal")
            try:
                yield
            finally:
                app.state.ready = False
                TOOL_PROCESSES.shutdown()  # CPU-bound tools' workers, if any ran

    return lifespan


def _route_once(app: FastAPI) -> None:
    """Route one request's scope through every route, unanswered: FastAPI prepares each
    route's handling when it first routes a request (~0.1-0.2 s of CPU for the ~60 routes),
    which otherwise held the event loop on the first request (a watchdog warning naming
    pydantic's schema code, and a slow first answer)."""
    scope = {"type": "http", "method": "GET", "path": "/", "root_path": "", "headers": []}
    for route in app.router.routes:
        route.matches(scope)


def allowed_scopes(allow: Mapping[str, frozenset[str]]) -> list[str]:
    """The scopes the agents' ``allow`` lists grant access by (``scope:NAME``)."""
    return sorted(
        {
            n.removeprefix("scope:")
            for names in allow.values()
            for n in names
            if n.startswith("scope:")
        }
    )
