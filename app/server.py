"""``create_app()``: the composition root that mounts the enabled adapters."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import orjson
from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agenthost.adapters.base import Adapter
from agenthost.adapters.routing import allowed_methods
from agenthost.adapters.sse import KeepAlive
from agenthost.agents import Agent
from agenthost.app.docs_ui import ASSET_PATHS, REDOC_PATHS, add_docs
from agenthost.app.fairness import InFlightLimit
from agenthost.app.guards import APIKeyGuard, BodyLimitGuard, SiteGuard
from agenthost.app.head import HeadAsGet
from agenthost.app.host import Host
from agenthost.app.lanes import ExactRoutes
from agenthost.app.logs import RequestContext
from agenthost.app.metrics import metrics_endpoint
from agenthost.app.openapi_errors import document_errors
from agenthost.app.playground import PAGE_PATHS, build_router
from agenthost.app.protocols import ADAPTERS
from agenthost.app.settings import Settings

# Swagger UI's own files too, or /docs would load blank with keys on.
PUBLIC_PATHS = ("/healthz", "/readyz", "/docs", "/openapi.json", *ASSET_PATHS)
PUBLIC_PATHS += REDOC_PATHS
PUBLIC_PATHS += PAGE_PATHS  # the playground's page and files (its agents.json needs a key)
# Agent cards are public (they declare how to authenticate), wherever they are.
PUBLIC_SUFFIXES = ("/.well-known/agent-card.json",)

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
    settings, registry, principals = host.settings, host.registry, host.principals
    adapters: dict[str, Adapter] = {}
    chosen = "adapters" in settings.model_fields_set
    for name in dict.fromkeys(settings.adapters):
        try:
            adapters[ADAPTERS[name].prefix] = host.adapter(name)
        except ImportError as exc:
            if chosen:
                raise
            # Not asked for by name: serve the protocols that are installed.
            logger.warning("not serving %s: %s", name, exc)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with host.running(adapters.values()):
            app.state.ready = True
            surfaces = ", ".join(f"{a.name} at {prefix}" for prefix, a in adapters.items())
            names = ", ".join(registry)
            logger.info("serving %d agents (%s) over %s", len(registry), names, surfaces)
            if principals:
                logger.info("auth on: %d API keys", len(principals))
            else:
                logger.warning("auth off: every caller is the anonymous principal")
            try:
                yield
            finally:
                app.state.ready = False

    # FastAPI's own OpenTelemetry is off: app/tracing.py makes the one server span per
    # request (FastAPI's would double it under a global provider, and its checks of the
    # global providers cost every request).
    no_telemetry: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}
    app = FastAPI(
        title="agenthost",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        telemetry=no_telemetry,
    )
    add_docs(app)
    if settings.playground:
        app.include_router(build_router())
    app.state.ready = False
    app.state.host = host
    app.state.agents = registry
    app.state.adapters = adapters
    for prefix, adapter in adapters.items():
        app.include_router(adapter.router, prefix=prefix)
        # The router's root answers at the bare prefix too, without a redirect.
        for route in adapter.router.routes if adapter.at_bare_prefix else ():
            if isinstance(route, Route) and route.path == "/":
                methods = list(route.methods) if route.methods else None
                app.add_route(prefix, route.endpoint, methods, include_in_schema=False)
        # Optional: routes an adapter serves at the root (discovery documents).
        if adapter.root_router is not None:
            app.include_router(adapter.root_router)

    @app.get("/healthz", tags=["operations"], summary="Alive")
    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    @app.get(
        "/readyz",
        tags=["operations"],
        summary="Ready to serve (503 while starting or draining)",
    )
    async def readyz() -> Response:
        ready = bool(app.state.ready)
        body: dict[str, Any] = {"status": "ready" if ready else "starting", "agents": len(registry)}
        stores = await host.store_health()
        sessions_never_up = stores.get("session_store") == "down" and not host.store_seen_up
        tasks_never_up = False
        for adapter in adapters.values():
            # A store an adapter prepares at start-up (A2A's task tables).
            if (store_health := getattr(adapter, "store_health", None)) is not None:
                stores.update(await store_health())
                # Down since start: not ready; down later: degraded, kept in rotation.
                tasks_never_up |= not getattr(adapter, "store_seen_up", True)
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
        return Response(orjson.dumps(body), 200 if ready else 503, media_type="application/json")

    if host.metrics is not None:
        endpoint = metrics_endpoint(host.metrics)
        app.add_route("/metrics", endpoint, ["GET"], include_in_schema=False)

    def error_for(path: str, status: int, message: str, code: str) -> Response:
        for prefix, adapter in adapters.items():
            if path == prefix or path.startswith(prefix + "/"):
                return adapter.error_response(status, message, code=code)
        body = {"error": {"message": message, "code": code}}
        return Response(orjson.dumps(body), status, media_type="application/json")

    @app.exception_handler(StarletteHTTPException)
    async def routing_error(request: Request, exc: StarletteHTTPException) -> Response:
        # Unknown paths and wrong methods (and any HTTPException a route raises),
        # in the protocol's own error shape.
        codes = {404: "not_found", 405: "method_not_allowed"}
        routing = {
            404: f"no route {request.url.path}",
            405: f"{request.method} is not allowed on {request.url.path}",
        }
        message = str(exc.detail)
        if exc.detail == HTTPStatus(exc.status_code).phrase:  # the router's: say which route
            message = routing.get(exc.status_code, message)
        response = error_for(
            request.url.path, exc.status_code, message, codes.get(exc.status_code, "http_error")
        )
        response.headers.update(exc.headers or {})
        if exc.status_code == 405 and (allowed := allowed_methods(app.routes, request.scope)):
            response.headers["allow"] = ", ".join(allowed)  # every route's, not the first's
        return response

    document_errors(app, error_for, auth=bool(principals), public=PUBLIC_PATHS)
    # Innermost: an adapter's hottest routes, past FastAPI's route matching (app/lanes.py).
    lanes = {
        (method, prefix + path): endpoint
        for prefix, adapter in adapters.items()
        for (method, path), endpoint in getattr(adapter, "asgi_routes", {}).items()
    }
    if lanes:
        app.add_middleware(ExactRoutes, routes=lanes)
    # Keep-alive comments on every SSE answer, the SDKs' too (adapters/sse.py).
    app.add_middleware(KeepAlive, seconds=settings.stream_keepalive_seconds)
    app.add_middleware(
        BodyLimitGuard,
        max_bytes=settings.max_body_bytes,
        max_in_flight_bytes=settings.max_body_bytes_in_flight,
        error_for=error_for,
    )
    app.add_middleware(HeadAsGet)
    if principals and settings.max_requests_per_principal:
        # Inside the key guard, which names the principal.
        app.add_middleware(
            InFlightLimit, max_requests=settings.max_requests_per_principal, error_for=error_for
        )
    if principals:
        app.add_middleware(
            APIKeyGuard,
            principals=principals,
            public=(*PUBLIC_PATHS, "/metrics") if settings.metrics_public else PUBLIC_PATHS,
            public_suffixes=PUBLIC_SUFFIXES,
            error_for=error_for,
        )
    public_hosts = [urlsplit(url).netloc for url in public_urls(settings)]
    app.add_middleware(
        SiteGuard,
        hosts=[*settings.allowed_hosts, *settings.mcp_allowed_hosts, *public_hosts],
        origins=[
            *settings.cors_origins,
            *settings.mcp_allowed_origins,
            *(f"{urlsplit(url).scheme}://{urlsplit(url).netloc}" for url in public_urls(settings)),
        ],
        check_host=bool(settings.allowed_hosts) or _is_loopback(settings.host),
        exempt=("/healthz", "/readyz"),
        error_for=error_for,
    )
    if settings.cors_origins:
        # Outermost, so that browsers' preflight requests need no key.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["*"],
            expose_headers=["x-should-retry"],
        )
    # Outermost: every request has its id and protocol, whatever answers it.
    app.add_middleware(RequestContext, prefixes={p: a.name for p, a in adapters.items()})
    if host.tracing is not None:
        from agenthost.app.tracing import ServerSpans

        app.add_middleware(ServerSpans, tracing=host.tracing)
    return app


def public_urls(settings: Settings) -> list[str]:
    """The public URLs the settings name (where the server is reached from outside)."""
    return [url for url in (settings.a2a_public_url,) if url]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"
