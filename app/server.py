"""``create_app()``: the composition root that mounts the enabled adapters."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import orjson
from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agenthost.adapters.base import Adapter, AdapterContext
from agenthost.agents import Agent
from agenthost.agents.limits import RunLimits, set_default_limits
from agenthost.app.build import load_agents
from agenthost.app.docs_ui import add_docs
from agenthost.app.guards import APIKeyGuard, BodyLimitGuard
from agenthost.app.head import HeadAsGet
from agenthost.app.memory import memory_factory
from agenthost.app.principals import check_allow
from agenthost.app.registry import Registry
from agenthost.app.settings import AdapterName, Settings

if TYPE_CHECKING:
    from agenthost.adapters.mcp import MCPOptions

# Where each adapter is mounted; the composition root decides, not the adapter.
PREFIXES: dict[AdapterName, str] = {"openai": "/v1", "a2a": "/a2a", "mcp": "/mcp", "acp": "/acp"}
PUBLIC_PATHS = ("/healthz", "/readyz", "/docs", "/openapi.json")
# Agent cards are public (they declare how to authenticate), wherever they are.
PUBLIC_SUFFIXES = ("/.well-known/agent-card.json",)

logger = logging.getLogger("agenthost")


def _adapter_factories(
    settings: Settings, agents: Registry, principals: Mapping[str, str]
) -> dict[AdapterName, Callable[[AdapterContext], Adapter]]:
    from agenthost.adapters.openai import OpenAIAdapter

    def mcp(context: AdapterContext) -> Adapter:
        from agenthost.adapters.mcp import MCPAdapter

        return MCPAdapter(context, mcp_options(settings, agents))

    def acp(context: AdapterContext) -> Adapter:
        from agenthost.adapters.acp import ACPAdapter

        return ACPAdapter(context, max_runs=settings.acp_max_runs, run_ttl=settings.acp_run_ttl)

    return {
        "openai": OpenAIAdapter,
        "a2a": lambda context: _a2a_adapter(context, settings, principals),
        "mcp": mcp,
        "acp": acp,
    }


def mcp_options(settings: Settings, agents: Registry) -> MCPOptions:
    """The MCP adapter's options from the settings (shared by /mcp and mcp-stdio)."""
    from agenthost.adapters.mcp import MCPOptions

    served = list(dict.fromkeys(settings.adapters))
    protocols = {name: [a for a in served if name in agents.exposed_by(a)] for name in agents}
    return MCPOptions(
        stateless=settings.mcp_stateless,
        allowed_hosts=settings.mcp_allowed_hosts,
        allowed_origins=settings.mcp_allowed_origins,
        progress_interval=settings.mcp_progress_interval,
        session_idle_timeout=settings.mcp_session_idle_timeout,
        max_body_bytes=settings.max_body_bytes,
        protocols=protocols,
    )


def _a2a_adapter(
    context: AdapterContext, settings: Settings, principals: Mapping[str, str]
) -> Adapter:
    from agenthost.adapters.a2a import A2AAdapter, A2AOptions

    options = A2AOptions(
        prefix=PREFIXES["a2a"],
        public_url=settings.a2a_public_url,
        trust_forwarded=settings.a2a_trust_forwarded,
        default_agent=settings.a2a_default_agent,
        grpc_port=settings.a2a_grpc_port,
        grpc_host=settings.a2a_grpc_host,
        grpc_public_host=settings.a2a_grpc_public_host,
        task_store=settings.a2a_task_store,
        task_max=settings.a2a_task_max,
        task_ttl=settings.a2a_task_ttl,
        push_private_networks=settings.a2a_push_private_networks,
        card_v03=settings.a2a_card_v03,
        principal_for_key=principals.get if principals else None,
    )
    return A2AAdapter(context, options)


def create_app(
    settings: Settings | None = None,
    agents: Mapping[str, Agent] | None = None,
    *,
    allow: Mapping[str, frozenset[str]] | None = None,
) -> FastAPI:
    """The ASGI app serving ``agents`` (default: built from ``settings.config``).

    ``allow`` limits agents to principals; by default it is the registry's.
    """
    settings = settings or Settings()
    set_default_limits(RunLimits(settings.max_output_chars, settings.max_run_seconds))
    if agents is None:
        _, agents = load_agents(settings.config)
    registry = agents if isinstance(agents, Registry) else Registry.of(agents)
    allow = registry.allow if allow is None else allow
    principals = settings.principals()
    check_allow(allow, principals)
    if not principals and allow:
        logger.warning(
            "auth off: agents with an allow list (%s) are served to nobody but 'anonymous'",
            ", ".join(allow),
        )

    new_memory = memory_factory(settings.session_max, settings.session_ttl)
    factories = _adapter_factories(settings, registry, principals)
    adapters: dict[str, Adapter] = {}
    chosen = "adapters" in settings.model_fields_set
    for name in dict.fromkeys(settings.adapters):
        served = registry.exposed_by(name)
        context = AdapterContext(served, new_memory(name), allow, new_memory, registry.skills)
        try:
            adapters[PREFIXES[name]] = factories[name](context)
        except ImportError as exc:
            if chosen:
                raise
            # Not asked for by name: serve the protocols that are installed.
            logger.warning("not serving %s: %s", name, exc)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for resource in registry.resources:
                await stack.enter_async_context(resource.lifespan())
            for agent in registry.values():
                await stack.enter_async_context(agent.lifespan())
            for adapter in adapters.values():
                await stack.enter_async_context(adapter.lifespan())
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

    app = FastAPI(title="agenthost", lifespan=lifespan, docs_url=None, redoc_url=None)
    add_docs(app)
    app.state.ready = False
    app.state.agents = registry
    app.state.adapters = adapters
    for prefix, adapter in adapters.items():
        app.include_router(adapter.router, prefix=prefix)
        # A router's root answers at the bare prefix too, without a redirect
        # (MCP clients POST to /mcp, and some refuse to follow redirects).
        for route in adapter.router.routes:
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
        for resource in registry.resources:
            # An optional part that is down (e.g. an MCP server) degrades the
            # service without taking the replica out of rotation.
            health = body[resource.name] = dict(resource.health())
            if ready and any(state != "up" for state in health.values()):
                body["status"] = "degraded"
        return Response(orjson.dumps(body), 200 if ready else 503, media_type="application/json")

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
        return response

    app.add_middleware(BodyLimitGuard, max_bytes=settings.max_body_bytes, error_for=error_for)
    app.add_middleware(HeadAsGet)
    if principals:
        app.add_middleware(
            APIKeyGuard,
            principals=principals,
            public=PUBLIC_PATHS,
            public_suffixes=PUBLIC_SUFFIXES,
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
    return app
