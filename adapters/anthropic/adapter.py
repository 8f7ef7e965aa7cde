"""The Messages surface: every agent is a ``model`` of ``POST /v1/messages``.

The app mounts the router at ``/v1/messages``. Stateless, as Anthropic's
API is: the client sends the whole conversation, and nothing of a request
(``metadata.user_id`` included) is stored.

``GET /v1/models`` belongs to the OpenAI surface; a request carrying
``anthropic-version`` (Anthropic's SDKs always send it) is answered here
instead, in Anthropic's shape, by root routes that match only such requests
(:class:`VersionedRoute`): neither adapter knows of the other.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Scope

from agenthost.adapters.anthropic.convert import to_message, to_run
from agenthost.adapters.anthropic.errors import (
    AnthropicError,
    AnthropicRoute,
    from_exception,
    invalid,
)
from agenthost.adapters.anthropic.http import find_agent, json_response, read_body, sse_response
from agenthost.adapters.anthropic.schemas import (
    COUNT_TOKENS_BODY,
    MESSAGES_BODY,
    CountTokensRequest,
    MessagesRequest,
)
from agenthost.adapters.anthropic.stream import MessageEvents
from agenthost.adapters.anthropic.tokens import count_tokens
from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.endpoints import asgi_endpoint
from agenthost.agents import Agent


def _documented(schema: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` for a route whose JSON body follows ``schema``."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


class AnthropicAdapter:
    """Serves every agent as an Anthropic model."""

    name = "anthropic"
    at_bare_prefix = False

    def __init__(self, context: AdapterContext) -> None:
        self.context = context
        self._created = datetime.fromtimestamp(int(time.time()), UTC).isoformat()
        self._router = self._build_router()
        self._root_router = self._build_models_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @property
    def root_router(self) -> APIRouter:
        """``GET /v1/models[/{id}]`` for requests that carry ``anthropic-version``."""
        return self._root_router

    @property
    def asgi_routes(self) -> dict[tuple[str, str], ASGIApp]:
        """The create route as a plain ASGI app (the fast lane, :mod:`agenthost.app.lanes`)."""
        return {("POST", ""): asgi_endpoint(self.create_message, _error_response)}

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return nullcontext()

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return AnthropicError(status, message).response()

    async def create_message(self, request: Request) -> Response:
        body = await read_body(request, MessagesRequest)
        agent = find_agent(self.context.agents_for(principal_of(request)), body.model)
        beta = request.headers.get("anthropic-beta", "")
        messages, options = to_run(body, interleaved="interleaved-thinking-" in beta)
        if body.output_config and body.output_config.format and not agent.supports_response_format:
            raise invalid(f"output_config.format: agent {agent.name!r} cannot constrain its output")
        id = f"msg_{os.urandom(12).hex()}"
        if not body.stream:
            result = await unless_disconnected(
                request.receive, agent.run(messages, options=options)
            )
            return json_response(to_message(result, id=id, model=agent.name))
        # Started at once (a slow first token behind a proxy): a run failing before its first
        # token ends the stream with Anthropic's error event, as one failing later does.
        updates = agent.run_stream(messages, options=options)
        return sse_response(MessageEvents(agent.name, id).events(updates))

    async def count_tokens(self, request: Request) -> Response:
        body = await read_body(request, CountTokensRequest)
        find_agent(self.context.agents_for(principal_of(request)), body.model)
        return json_response({"input_tokens": count_tokens(body)})

    def _build_router(self) -> APIRouter:
        router = APIRouter(route_class=AnthropicRoute, tags=["anthropic"])
        router.add_api_route(
            "",
            self.create_message,
            methods=["POST"],
            summary="Create a message (Anthropic Messages API, streamed or not)",
            openapi_extra=_documented(MESSAGES_BODY),
        )
        router.add_api_route(
            "/count_tokens",
            self.count_tokens,
            methods=["POST"],
            summary="Estimate a message's input tokens",
            openapi_extra=_documented(COUNT_TOKENS_BODY),
        )
        return router

    def _model(self, agent: Agent) -> dict[str, Any]:
        created = self._created.replace("+00:00", "Z")
        return {
            "type": "model",
            "id": agent.name,
            "display_name": agent.name,
            "created_at": created,
        }

    def _build_models_router(self) -> APIRouter:
        router = APIRouter(route_class=VersionedRoute, include_in_schema=False)

        def visible(request: Request) -> Mapping[str, Agent]:
            return self.context.agents_for(principal_of(request))

        @router.get("/v1/models")
        async def list_models(request: Request) -> Response:
            data = [self._model(agent) for agent in visible(request).values()]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            page = {"data": data, "has_more": False, "first_id": first, "last_id": last}
            return json_response(page)

        @router.get("/v1/models/{model_id:path}")
        async def get_model(request: Request, model_id: str) -> Response:
            return json_response(self._model(find_agent(visible(request), model_id)))

        return router


class VersionedRoute(AnthropicRoute):
    """A route that matches only requests carrying ``anthropic-version``: the others go on
    to the routes after it (the OpenAI surface's, at the same path)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if not any(name == b"anthropic-version" for name, _ in scope.get("headers", ())):
            return Match.NONE, {}
        return super().matches(scope)


def _error_response(exc: Exception) -> Response:
    return from_exception(exc).response()  # as AnthropicRoute's
