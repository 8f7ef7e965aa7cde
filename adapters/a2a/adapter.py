"""The A2A surface: every agent at ``{prefix}/{agent}``, and on one gRPC port.

Under the prefix (``/a2a`` by default):

- ``GET /a2a`` lists the agents a caller may use, with their card URLs;
- ``/a2a/{agent}/.well-known/agent-card.json`` is the agent's card;
- ``POST /a2a/{agent}`` (or ``/a2a/{agent}/``) is its JSON-RPC endpoint;
- ``/a2a/{agent}/message:send``, ``/tasks/{id}``, ... its HTTP+JSON routes
  (0.3 paths under ``/v1/...`` too).

At the root, ``/.well-known/agent-card.json`` is the default agent's card.
An agent the caller may not use answers 404 like an unknown one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import orjson
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard, AgentExtension
from fastapi import APIRouter
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.a2a import agent_stack, agent_stack_registration, cards, push
from agenthost.adapters.a2a.cluster import ClusterRequestHandler
from agenthost.adapters.a2a.executor import AgentRunExecutor
from agenthost.adapters.a2a.grpc_server import GrpcServer
from agenthost.adapters.a2a.jsonrpc import install_log_filter
from agenthost.adapters.a2a.options import A2AOptions
from agenthost.adapters.a2a.rest import METHODS as FRONT_METHODS
from agenthost.adapters.a2a.runs import PROTOCOL as TASK_RUNS
from agenthost.adapters.a2a.runs import TaskRuns
from agenthost.adapters.a2a.service import AgentService, card_response
from agenthost.adapters.a2a.tasks import TaskStores
from agenthost.adapters.a2a.turns import HeldTurns, hold_turns
from agenthost.adapters.a2a.users import CONNECTION
from agenthost.adapters.base import AdapterContext, RequestRules, principal_of
from agenthost.adapters.cancels import CancelChannel
from agenthost.agents import Agent


def error_body(status: int, message: str, code: str) -> Response:
    """A2A's HTTP+JSON error shape (``google.rpc.Status`` as JSON)."""
    body = {"error": {"code": status, "status": code, "message": message}}
    return Response(orjson.dumps(body), status, media_type="application/json")


class _AppError(Response):
    """An error the app raises (401, 413, 415, 429, 503…) in the shape of the A2A binding
    asked: a JSON-RPC error (id null) for a ``POST`` at an agent's URL, its JSON-RPC
    endpoint; HTTP+JSON's ``google.rpc.Status`` anywhere else. The shape is chosen when
    the response is sent: the app picks the adapter by path, then may add headers."""

    def __init__(self, status: int, message: str, code: str, prefix: str) -> None:
        body = {"error": {"code": status, "status": code, "message": message}}
        super().__init__(orjson.dumps(body), status, media_type="application/json")
        self.message = message
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _at_jsonrpc_url(scope, self.prefix):
            code = -32603 if self.status_code >= 500 else -32600
            error = {"code": code, "message": self.message}
            self.body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
            self.headers["content-length"] = str(len(self.body))
        await super().__call__(scope, receive, send)


def _at_jsonrpc_url(scope: Scope, prefix: str) -> bool:
    path: str = scope.get("path", "")
    if scope.get("method") != "POST" or not path.startswith(prefix + "/"):
        return False
    agent = path[len(prefix) + 1 :].removesuffix("/")
    return bool(agent) and "/" not in agent


def unknown_agent(name: str) -> Response:
    return error_body(404, f"no agent named {name!r} is served over A2A here", "NOT_FOUND")


class A2AAdapter:
    """Serves every agent over A2A 1.0 (JSON-RPC, HTTP+JSON, gRPC) and 0.3."""

    name = "a2a"
    # The a2a-sdk REST client's subscribe is bodyless (its cancel sends JSON; neither body
    # is read), under the 0.3 ``/v1`` paths and a tenant's too; each agent's URL is a
    # JSON-RPC endpoint.
    request_rules = RequestRules(
        bodyless_posts=r"/[^/]+(?:/[^/]+)?/tasks/[^/]+:(?:cancel|subscribe)",
        jsonrpc_paths=r"/[^/]+/?",
    )
    at_bare_prefix = False

    def __init__(self, context: AdapterContext, options: A2AOptions | None = None) -> None:
        self.context = context
        self.options = options or A2AOptions()
        self.stores = TaskStores(
            self.options.task_store,
            max_tasks=self.options.task_max,
            ttl=self.options.task_ttl,
            max_bytes=self.options.task_max_bytes,
        )
        self.default_agent = self._default_agent()
        # Only tasks shared by replicas can be cancelled from another one.
        self.cancels = CancelChannel.of(context.memory, "a2a") if self.stores.shared else None
        # Runs outlive their replica when both the tasks and the run log are shared.
        self.runs: TaskRuns | None = None
        if self.stores.shared and context.durable.log.shared:
            self.runs = TaskRuns(context.durable, context.memory, context.agents)
            context.durable.handle(TASK_RUNS, self.runs)
        self._push_client = push.new_client()
        self._registered: dict[str, dict[str, Any]] = {}
        """The cards registered with Agent Stack at start-up, by location."""
        self.services: dict[str, AgentService] = {
            name: self._service(agent) for name, agent in context.agents.items()
        }
        self._router = self._build_router()
        self.root_router = self._build_root_router()
        self.grpc = GrpcServer(self) if self.options.grpc_port else None

    @property
    def router(self) -> APIRouter:
        return self._router

    @property
    def asgi_routes(self) -> dict[tuple[str, str], ASGIApp]:
        """The hot POST routes past FastAPI's route matching (:mod:`agenthost.app.lanes`).

        Each agent's JSON-RPC endpoint and its HTTP+JSON ``message:send`` and
        ``message:stream``: the dispatch the router's ``Route``/``Mount`` call,
        with the scope they give it (``path_params``, the Mount's ``root_path``).
        """
        routes: dict[tuple[str, str], ASGIApp] = {}
        for name in self.services:
            if "/" in name:
                continue  # not one path segment: the router's {agent} never matches it
            routes["POST", f"/{name}"] = _Lane(self._rpc, name, "")
            for method in LANE_METHODS:
                routes["POST", f"/{name}{method}"] = _Lane(self._dispatch, name, method)
        return routes

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self._push_client.aclose)
            stack.push_async_callback(self.stores.aclose)
            await self.stores.start()
            for service in self.services.values():
                stack.push_async_callback(service.handler.aclose)
            if self.grpc is not None:
                await stack.enter_async_context(self.grpc.serving())
            if self.cancels is not None:
                listener = asyncio.create_task(self.cancels.listen(self._cancel_here))
                stack.callback(listener.cancel)
            if self._registered:
                token = self.options.agent_stack_platform_token
                registrar = agent_stack_registration.PlatformRegistrar(
                    self.options.agent_stack_platform_url,
                    token.get_secret_value() if token else None,
                )
                await stack.enter_async_context(
                    agent_stack_registration.registering(registrar, self._registered)
                )
            yield

    async def _cancel_here(self, owner: str, task_id: str) -> None:
        agent, _, principal = owner.partition("/")
        service = self.services.get(agent)
        if service is not None and isinstance(service.handler, ClusterRequestHandler):
            await service.handler.cancel_here(principal, task_id)
        if self.runs is not None:
            await self.runs.cancel_task(task_id)

    async def store_health(self) -> dict[str, str]:
        """The shared task store's state, for /readyz."""
        return await self.stores.health()

    @property
    def store_seen_up(self) -> bool:
        """Whether the shared task store has been reachable since start (its tables made)."""
        return self.stores.initialized

    def bounded_stores(self) -> list[tuple[str, Any]]:
        """The in-memory task and push-config stores (the app counts their evictions)."""
        return list(self.stores.bounded())

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return _AppError(status, message, code.upper(), self.context.prefix)

    def service_for(self, principal: str, name: str) -> AgentService | None:
        """The agent's service if it is served here and ``principal`` may use it."""
        if self.context.find_agent(principal, name) is None:
            return None
        return self.services.get(name)

    def card(self, connection: HTTPConnection, agent: Agent) -> AgentCard:
        base = cards.origin(connection, self.options)
        # Every agent: a 0.3 gRPC call names its agent in the ``a2a-tenant`` metadata.
        skills = self.context.skills.get(agent.name, ())
        return cards.build_card(
            agent,
            base,
            self.options,
            grpc_v03=True,
            skills=skills,
            extensions=self._extensions(agent),
        )

    def _extended_card_of(self, agent: Agent) -> Any:
        """The handler's ``extended_card_modifier``: the caller's card (its URLs from the
        request; a gRPC call's from the settings), extended (:func:`cards.extend_card`)."""

        async def extended(card: AgentCard, context: ServerCallContext) -> AgentCard:
            connection = context.state.get(CONNECTION)
            if isinstance(connection, HTTPConnection):
                card = self.card(connection, agent)
            return cards.extend_card(card, agent)

        return extended

    def _extensions(self, agent: Agent) -> list[AgentExtension]:
        if not self.options.serves_agent_stack(agent.name):
            return []
        extensions = agent_stack.card_extensions(agent)
        if self.options.agent_stack_register:
            extensions.append(agent_stack_registration.self_registration_extension(agent.name))
        return extensions

    def _default_agent(self) -> str | None:
        name = self.options.default_agent
        if name is not None:
            return name if name in self.context.agents else None
        return next(iter(self.context.agents)) if len(self.context.agents) == 1 else None

    def _service(self, agent: Agent) -> AgentService:
        memory = self.context.memory
        push_configs = self.stores.push_configs(agent.name)
        validator = push.url_validator(private_networks=self.options.push_private_networks)
        stack = self.options.serves_agent_stack(agent.name)
        static_card = cards.build_card(
            agent,
            (self.options.public_url or "http://localhost").rstrip("/"),
            self.options,
            grpc_v03=False,
            skills=self.context.skills.get(agent.name, ()),
            extensions=self._extensions(agent),
        )
        if stack and self.options.agent_stack_register and self.options.public_url:
            url = cards.agent_url(self.options.public_url.rstrip("/"), self.options, agent.name)
            where = agent_stack_registration.location(url, agent.name)
            self._registered[where] = agent_card_to_dict(static_card)
        tasks = self.stores.tasks(agent.name, memory)
        # An Agent Stack run is this request's own: the key it may be lent is never stored,
        # so no other replica could take the run over.
        turns = HeldTurns()
        hold_turns(tasks, turns)  # a run's turn is kept once its task's end is saved
        executor_type = agent_stack.AgentStackExecutor if stack else AgentRunExecutor
        runs = None if stack else self.runs
        executor = executor_type(
            agent,
            memory,
            reply_message=agent.name in self.options.message_replies,
            runs=runs,
            turns=turns,
        )
        if self.runs is not None:
            self.runs.task_stores[agent.name] = tasks
        handler_type = agent_stack.AgentStackHandler if stack else ClusterRequestHandler
        handler = handler_type(
            executor,
            tasks,
            static_card,
            push_config_store=push_configs,
            push_sender=push.build_sender(self._push_client, push_configs, validator),
            push_url_validator=validator,
            event_stream=self.stores.event_stream,
            cancels=self.cancels,
            agent=agent.name,
            outage=self.stores.outage,
            # With auth on, authenticated callers get the extended card (the SDK refuses
            # the method while the public card does not advertise it).
            extended_agent_card=static_card if self.options.auth else None,
            extended_card_modifier=self._extended_card_of(agent),
        )
        if isinstance(handler, agent_stack.AgentStackHandler):
            handler.platform_url = self.options.agent_stack_platform_url
        return AgentService(handler, lambda request: self.card(request, agent))

    def _build_router(self) -> APIRouter:
        router = APIRouter(tags=["a2a"])
        dispatch = self._dispatch = _AgentDispatch(self)

        @router.get("", summary="The agents served over A2A, with their card URLs")
        async def index(request: Request) -> Response:
            base = cards.origin(request, self.options)
            agents = self.context.agents_for(principal_of(request))
            listed = [
                {
                    "name": name,
                    "description": agent.description,
                    "url": (url := cards.agent_url(base, self.options, name)),
                    "card": f"{url}/.well-known/agent-card.json",
                }
                for name, agent in agents.items()
                if name in self.services
            ]
            body = orjson.dumps({"agents": listed})
            return Response(body, media_type="application/json")

        self._rpc = _AgentDispatch(self, rpc=True)
        router.routes.append(Route("/{agent}", self._rpc, methods=["POST"]))
        router.routes.append(Mount("/{agent}", app=dispatch))
        return router

    def _build_root_router(self) -> APIRouter:
        router = APIRouter(tags=["a2a"])

        @router.get("/.well-known/agent-card.json", summary="The default agent's A2A card")
        async def root_card(request: Request) -> Response:
            name = self.default_agent
            agent = self.context.find_agent(principal_of(request), name) if name else None
            if agent is None or name not in self.services:
                return error_body(404, "no default A2A agent is set", "NOT_FOUND")
            return card_response(self.card(request, agent), request)

        return router


class _AgentDispatch:
    """Hands a request under ``{prefix}/{agent}`` to that agent's app, or 404s.

    A ``POST`` at the agent's URL (``rpc``, or a path ending in ``/`` under
    the Mount) goes to the agent's JSON-RPC front, ``message:send`` and
    ``message:stream`` to its HTTP+JSON front.
    """

    def __init__(self, adapter: A2AAdapter, *, rpc: bool = False) -> None:
        self.adapter = adapter
        self.rpc = rpc
        install_log_filter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path_params"]["agent"]
        service = self.adapter.service_for(principal_of(scope), name)
        if service is None:
            await unknown_agent(name)(scope, receive, send)
        elif scope["method"] != "POST":
            await service.app(scope, receive, send)
        elif self.rpc or scope["path"].endswith("/"):
            await service.rpc(scope, receive, send)
        elif scope["path"][len(scope.get("root_path", "")) :] in FRONT_METHODS:
            await service.send(scope, receive, send)
        else:
            await service.app(scope, receive, send)


LANE_METHODS = FRONT_METHODS
"""The HTTP+JSON routes in the fast lane (the ones every exchange starts with)."""


class _Lane:
    """An agent's route in the app's fast lane: the scope FastAPI's match would give ``app``."""

    def __init__(self, app: ASGIApp, agent: str, suffix: str) -> None:
        self.app, self.agent, self.suffix = app, agent, suffix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = {**scope, "path_params": {"agent": self.agent}}
        if self.suffix:  # under the Mount: its root_path is the agent's URL
            scope["root_path"] = scope["path"][: -len(self.suffix)]
        await self.app(scope, receive, send)
