"""The middleware stack every request passes, and the errors the app itself answers.

From the outside in: tracing spans, the request's id and protocol, CORS, the
Host/Origin/Content-Type check, API keys, the quotas per principal, the
per-principal in-flight bound, HEAD as GET, the body limit, then the
adapters' fast lanes. An error raised before an adapter is reached is
answered in that adapter's protocol shape (:func:`error_responder`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus

import orjson
from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Scope

from agenthost.adapters.base import (
    NO_RULES,
    Adapter,
    HasAsgiRoutes,
    HasRequestRules,
    HasSiteAllowances,
    RequestRules,
)
from agenthost.adapters.routing import allowed_methods
from agenthost.adapters.sse import KeepAlive
from agenthost.app.docs_ui import ASSET_PATHS, REDOC_PATHS
from agenthost.app.fairness import InFlightLimit
from agenthost.app.guards import APIKeyGuard, BodyLimitGuard, SiteGuard
from agenthost.app.head import HeadAsGet
from agenthost.app.host import Host
from agenthost.app.identity.metadata import PATHS as METADATA_PATHS
from agenthost.app.lanes import ExactRoutes
from agenthost.app.logs import RequestContext
from agenthost.app.playground import PAGE_PATHS
from agenthost.app.quotas import QuotaGuard
from agenthost.app.settings import Settings

# Swagger UI's own files too, or /docs would load blank with keys on.
PUBLIC_PATHS = ("/healthz", "/readyz", "/docs", "/openapi.json", *ASSET_PATHS)
PUBLIC_PATHS += REDOC_PATHS
PUBLIC_PATHS += PAGE_PATHS  # the playground's page and files (its agents.json needs a key)
# Agent cards are public (they declare how to authenticate), wherever they are.
PUBLIC_SUFFIXES = ("/.well-known/agent-card.json",)

ErrorFor = Callable[[str, int, str, str], Response]
"""``error_for(path, status, message, code)``: the error in the shape of the path's protocol."""


def _rules(adapter: Adapter) -> RequestRules:
    """What ``adapter`` declares of its routes for the request guards."""
    return adapter.request_rules if isinstance(adapter, HasRequestRules) else NO_RULES


def error_responder(adapters: Mapping[str, Adapter]) -> ErrorFor:
    """Errors in the protocol shape of the adapter whose prefix the path is under (a
    JSON-RPC error at a JSON-RPC endpoint of a protocol that also has other routes)."""
    jsonrpc = {
        prefix: re.compile(re.escape(prefix) + str(_rules(adapter).jsonrpc_paths))
        for prefix, adapter in adapters.items()
        if _rules(adapter).jsonrpc_paths
    }

    def error_for(path: str, status: int, message: str, code: str) -> Response:
        for prefix, adapter in adapters.items():
            if path == prefix or path.startswith(prefix + "/"):
                if prefix in jsonrpc and jsonrpc[prefix].fullmatch(path):
                    return jsonrpc_error(status, message, code)
                return adapter.error_response(status, message, code=code)
        body = {"error": {"message": message, "code": code}}
        return Response(orjson.dumps(body), status, media_type="application/json")

    return error_for


def jsonrpc_error(status: int, message: str, code: str) -> Response:
    """A JSON-RPC error without an id (the request was not read), as MCP's adapter answers:
    -32603 for a server error, else -32600 (the request is refused as it came)."""
    error = {
        "code": -32603 if status >= 500 else -32600,
        "message": message,
        "data": {"code": code},
    }
    body = {"jsonrpc": "2.0", "id": None, "error": error}
    return Response(orjson.dumps(body), status, media_type="application/json")


def handle_routing_errors(app: FastAPI, error_for: ErrorFor) -> None:
    """Unknown paths and wrong methods (and any HTTPException a route raises),
    in the protocol's own error shape."""

    @app.exception_handler(StarletteHTTPException)
    async def routing_error(request: Request, exc: StarletteHTTPException) -> Response:
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


def add_middleware(
    app: FastAPI, host: Host, adapters: Mapping[str, Adapter], error_for: ErrorFor
) -> None:
    """The whole stack, added innermost first (Starlette wraps each added one around)."""
    settings, principals, auth = host.settings, host.principals, host.auth
    # Innermost: an adapter's hottest routes, past FastAPI's route matching (app/lanes.py).
    lanes = {
        (method, prefix + path): endpoint
        for prefix, adapter in adapters.items()
        if isinstance(adapter, HasAsgiRoutes)
        for (method, path), endpoint in adapter.asgi_routes.items()
    }
    if lanes:
        app.add_middleware(ExactRoutes, routes=lanes)
    # Keep-alive comments on every SSE answer, the SDKs' too (adapters/sse.py).
    app.add_middleware(KeepAlive, seconds=settings.stream_keepalive_seconds)
    app.add_middleware(
        BodyLimitGuard,
        max_bytes=settings.max_body_bytes,
        budget=host.body_budget,  # the adapters' WebSocket messages count against it too
        error_for=error_for,
    )
    app.add_middleware(HeadAsGet)
    if auth and settings.max_requests_per_principal:
        # Inside the key guard, which names the principal.
        app.add_middleware(
            InFlightLimit, max_requests=settings.max_requests_per_principal, error_for=error_for
        )
    if auth and host.quotas is not None:
        # Just inside the key guard, which names the principal (app/quotas.py).
        app.add_middleware(
            QuotaGuard,
            quotas=host.quotas,
            error_for=error_for,
            exempt=(*PUBLIC_PATHS, *METADATA_PATHS, "/metrics"),
            exempt_suffixes=PUBLIC_SUFFIXES,
            bodyless=_bodyless(adapters),
        )
    if auth:
        public = (*PUBLIC_PATHS, "/metrics") if settings.metrics_public else PUBLIC_PATHS
        app.add_middleware(
            APIKeyGuard,
            principals=principals,
            public=(*public, *METADATA_PATHS) if host.tokens else public,
            public_suffixes=PUBLIC_SUFFIXES,
            error_for=error_for,
            tokens=host.tokens,
            required_scopes=settings.oidc_required_scopes,
        )
    hosts, origins = site_allowances(settings)
    app.add_middleware(
        SiteGuard,
        hosts=hosts,
        origins=origins,
        check_host=_checks_hosts(settings),
        exempt=("/healthz", "/readyz"),
        error_for=error_for,
        strict_json=tuple(p for p, a in adapters.items() if _rules(a).strict_json),
        bodyless=_bodyless(adapters),
        untyped=tuple(p for p, a in adapters.items() if _rules(a).untyped_json_clients),
        routed=lambda scope: _routed(app, scope),
    )
    if settings.cors_origins:
        # Outermost, so that browsers' preflight requests need no key.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["*"],
            # WWW-Authenticate: a browser's MCP client finds the resource metadata in it.
            expose_headers=["x-should-retry", "www-authenticate"],
        )
    # Outermost: every request has its id and protocol, whatever answers it.
    app.add_middleware(RequestContext, prefixes={p: a.name for p, a in adapters.items()})
    if host.tracing is not None:
        from agenthost.app.tracing import ServerSpans

        app.add_middleware(ServerSpans, tracing=host.tracing)


def _bodyless(adapters: Mapping[str, Adapter]) -> Callable[[str], object] | None:
    """Whether a ``POST`` path reads no body (cancels, subscriptions): None if none does."""
    bodyless = "|".join(
        re.escape(prefix) + str(_rules(adapter).bodyless_posts)
        for prefix, adapter in adapters.items()
        if _rules(adapter).bodyless_posts
    )
    return re.compile(bodyless).fullmatch if bodyless else None


def site_allowances(settings: Settings) -> tuple[list[str], list[str]]:
    """The Host headers and browser origins every surface accepts: the settings' own, and
    those each protocol's settings add (MCP's allowed hosts, A2A's public URL)."""
    hosts, origins = list(settings.allowed_hosts), list(settings.cors_origins)
    for protocol in settings.protocols.values():
        if isinstance(protocol, HasSiteAllowances):
            hosts += protocol.site_hosts()
            origins += protocol.site_origins()
    return hosts, origins


def _routed(app: FastAPI, scope: Scope) -> bool:
    """Whether a route of ``app`` takes the request (its method at its path): one no route
    takes is answered 404 or 405 by the router, whatever its headers."""
    return any(route.matches(scope)[0] is Match.FULL for route in app.routes)


def _checks_hosts(settings: Settings) -> bool:
    """Whether ``Host`` is checked: on a loopback address, or once allowed hosts are named
    (``AGENTHOST_ALLOWED_HOSTS``, or ``AGENTHOST_MCP_ALLOWED_HOSTS``, which turned the MCP
    SDK's own check on: now every surface's, as one)."""
    mcp = settings.protocols.get("mcp")
    mcp_hosts = isinstance(mcp, HasSiteAllowances) and bool(mcp.site_hosts())
    return bool(settings.allowed_hosts) or mcp_hosts or _is_loopback(settings.host)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"
