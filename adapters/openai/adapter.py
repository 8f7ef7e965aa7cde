"""The OpenAI-compatible surface: models, Chat Completions, Responses, Conversations.

The app mounts the router (at ``/v1`` by default). Chat Completions is
stateless; the Responses API keeps stored responses in this adapter's
memory manager and conversations in a second bounded store of their own
(:mod:`adapters.openai.store`); ``/responses`` also takes a WebSocket (the
Responses API's WebSocket mode, :mod:`adapters.openai.websocket`), and
``/responses/compact`` summarises a conversation (:mod:`adapters.openai.compact`). Endpoints
of OpenAI's API that are not served answer a 404 that says so, in the
OpenAI envelope.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from fastapi import APIRouter
from starlette.convertors import StringConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from agenthost.adapters.base import AdapterContext, RequestRules, principal_of
from agenthost.adapters.endpoints import asgi_endpoint
from agenthost.adapters.openai import background, chat, compact, conversations, responses
from agenthost.adapters.openai import request_bodies as bodies
from agenthost.adapters.openai import websocket as websocket_mode
from agenthost.adapters.openai.errors import OpenAIError, OpenAIRoute, from_exception
from agenthost.adapters.openai.http import find_agent, json_response
from agenthost.adapters.openai.shared import SharedConversationStore
from agenthost.adapters.openai.store import ConversationStore, ResponseStore
from agenthost.adapters.openai.turns import Stores
from agenthost.adapters.openai.websocket_checks import MessageChecks
from agenthost.agents import Agent

CONVERSATIONS_NAMESPACE = "openai-conversations"

# OpenAI endpoints people call that agenthost does not serve: a clear 404 each.
NOT_SERVED = {
    "/responses/input_tokens": "input token counting",
    "/completions": "the legacy Completions API",
    "/embeddings": "embeddings",
    "/moderations": "moderations",
    "/images/{path:path}": "images",
    "/audio/{path:path}": "audio",
    "/files": "files",
    "/files/{path:path}": "files",
    "/batches": "batches",
    "/assistants": "the Assistants API",
    "/threads": "the Assistants API",
    "/realtime/{path:path}": "the Realtime API",
}


class ResponseIdConvertor(StringConvertor):
    """A response id: any path segment but ``compact``, which is the compaction endpoint
    (so that ``GET /responses/compact`` is a 405 allowing ``POST``, not a missing response)."""

    regex = "(?!compact(?:/|$))[^/]+"


register_url_convertor("openai_response_id", ResponseIdConvertor())
RESPONSE = "/responses/{response_id:openai_response_id}"


class OpenAIAdapter:
    """Serves every agent as an OpenAI model."""

    root_router: APIRouter | None = None

    name = "openai"
    # A background response's cancel reads no body (the openai SDK declares JSON anyway;
    # curl -X POST does not).
    request_rules = RequestRules(bodyless_posts=r"/responses/[^/]+/cancel")
    at_bare_prefix = False

    def __init__(self, context: AdapterContext) -> None:
        self.context = context
        new_memory = context.new_memory
        # A context without new_memory (a bare test context) shares the one store.
        conversation_memory = (
            new_memory(CONVERSATIONS_NAMESPACE) if new_memory is not None else context.memory
        )
        conversations = (
            SharedConversationStore(conversation_memory, context.memory, context.shared_sessions)
            if context.shared_sessions
            else ConversationStore(conversation_memory)
        )
        self.stores = Stores(ResponseStore(context.memory), conversations)
        # Background responses run (and resume) on any replica with the agents of this server.
        context.durable.handle(
            background.PROTOCOL, background.BackgroundResponses(context.agents, self.stores)
        )
        self._created = int(time.time())
        self._router = self._build_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @property
    def asgi_routes(self) -> dict[tuple[str, str], ASGIApp]:
        """The hot routes as plain ASGI apps (the app's fast lane, :mod:`agenthost.app.lanes`).

        The same endpoints as the router's, with the same error handling.
        """
        return {
            ("POST", "/chat/completions"): asgi_endpoint(self._chat_completions, _error_response),
            ("POST", "/responses"): asgi_endpoint(self._create_response, _error_response),
        }

    async def _chat_completions(self, request: Request) -> Response:
        agents = self.context.agents_for(principal_of(request))
        return await chat.create_chat_completion(request, agents)

    async def _create_response(self, request: Request) -> Response:
        principal = principal_of(request)
        agents = self.context.agents_for(principal)
        return await responses.create_response(
            request, agents, self.stores, principal, self.context.durable
        )

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return nullcontext()

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return OpenAIError(status, message, code=code).response()

    def _model(self, agent: Agent) -> dict[str, Any]:
        return {
            "id": agent.name,
            "object": "model",
            "created": self._created,
            "owned_by": "agenthost",
            "description": agent.description,
        }

    def _build_router(self) -> APIRouter:
        router = APIRouter(route_class=OpenAIRoute, tags=["openai"])
        context, stores = self.context, self.stores
        readable = ["GET"]  # HEAD too: the app answers HEAD wherever GET is

        def visible(request: Request) -> Mapping[str, Agent]:
            return context.agents_for(principal_of(request))

        @router.api_route("/models", methods=readable, summary="List the agents as models")
        async def list_models(request: Request) -> Response:
            data = [self._model(agent) for agent in visible(request).values()]
            return json_response({"object": "list", "data": data})

        @router.api_route("/models/{model_id:path}", methods=readable, summary="One agent")
        async def get_model(request: Request, model_id: str) -> Response:
            return json_response(self._model(find_agent(visible(request), model_id)))

        @router.post(
            "/chat/completions",
            summary="Chat Completions (streamed or not)",
            openapi_extra=bodies.json_body(bodies.CHAT),
        )
        async def chat_completions(request: Request) -> Response:
            return await self._chat_completions(request)

        for path, what in NOT_SERVED.items():
            router.add_api_route(
                path, _not_served(what), methods=["GET", "POST", "DELETE"], include_in_schema=False
            )

        @router.post(
            "/responses",
            summary="Responses API (streamed or not)",
            openapi_extra=bodies.json_body(bodies.RESPONSE),
        )
        async def create_response(request: Request) -> Response:
            return await self._create_response(request)

        @router.post(
            "/responses/compact",
            summary="Compact a conversation into a summary item",
            openapi_extra=bodies.json_body(bodies.COMPACT),
        )
        async def compact_conversation(request: Request) -> Response:
            principal = principal_of(request)
            agents = context.agents_for(principal)
            return await compact.compact_conversation(request, agents, stores, principal)

        @router.websocket("/responses")
        async def responses_websocket(websocket: WebSocket) -> None:
            principal = principal_of(websocket)
            await websocket_mode.serve_responses(
                websocket,
                context.agents_for(principal),
                stores,
                MessageChecks.of(websocket, principal, context),
                max_bytes=context.max_body_bytes,
            )

        @router.api_route(RESPONSE, methods=readable, summary="A response")
        async def get_response(request: Request, response_id: str) -> Response:
            return await responses.get_response(
                request, response_id, stores, principal_of(request), context.durable
            )

        @router.post("/responses/{response_id}/cancel", summary="Cancel a background response")
        async def cancel_response(request: Request, response_id: str) -> Response:
            return await responses.cancel_response(
                response_id, stores, principal_of(request), context.durable
            )

        @router.delete(RESPONSE, summary="Delete a stored response")
        async def delete_response(request: Request, response_id: str) -> Response:
            return await responses.delete_response(response_id, stores, principal_of(request))

        @router.api_route(
            "/responses/{response_id}/input_items", methods=readable, summary="Its input items"
        )
        async def input_items(request: Request, response_id: str) -> Response:
            return await responses.list_input_items(
                request, response_id, stores, principal_of(request)
            )

        self._conversation_routes(router)
        return router

    def _conversation_routes(self, router: APIRouter) -> None:
        stores = self.stores
        readable = ["GET"]
        one = "/conversations/{conversation_id}"

        @router.post(
            "/conversations",
            summary="Create a conversation",
            openapi_extra=bodies.json_body(bodies.NEW_CONVERSATION),
        )
        async def create(request: Request) -> Response:
            return await conversations.create(request, stores, principal_of(request))

        @router.api_route(one, methods=readable, summary="A conversation")
        async def retrieve(request: Request, conversation_id: str) -> Response:
            return await conversations.retrieve(conversation_id, stores, principal_of(request))

        @router.post(
            one,
            summary="Update a conversation's metadata",
            openapi_extra=bodies.json_body(bodies.CONVERSATION_UPDATE),
        )
        async def update(request: Request, conversation_id: str) -> Response:
            principal = principal_of(request)
            return await conversations.update(request, conversation_id, stores, principal)

        @router.delete(one, summary="Delete a conversation")
        async def delete(request: Request, conversation_id: str) -> Response:
            return await conversations.delete(conversation_id, stores, principal_of(request))

        @router.api_route(one + "/items", methods=readable, summary="A conversation's items")
        async def list_items(request: Request, conversation_id: str) -> Response:
            principal = principal_of(request)
            return await conversations.list_items(request, conversation_id, stores, principal)

        @router.post(
            one + "/items",
            summary="Add items to a conversation",
            openapi_extra=bodies.json_body(bodies.NEW_ITEMS),
        )
        async def add_items(request: Request, conversation_id: str) -> Response:
            principal = principal_of(request)
            return await conversations.add_items(request, conversation_id, stores, principal)

        @router.api_route(one + "/items/{item_id}", methods=readable, summary="One item")
        async def get_item(request: Request, conversation_id: str, item_id: str) -> Response:
            principal = principal_of(request)
            return await conversations.get_item(conversation_id, item_id, stores, principal)

        @router.delete(one + "/items/{item_id}", summary="Delete an item")
        async def delete_item(request: Request, conversation_id: str, item_id: str) -> Response:
            principal = principal_of(request)
            return await conversations.delete_item(conversation_id, item_id, stores, principal)


def _error_response(exc: Exception) -> Response:
    return from_exception(exc).response()  # as OpenAIRoute's


def _not_served(what: str) -> Any:
    async def not_served() -> Response:
        raise OpenAIError(
            404,
            f"agenthost does not serve {what}; it serves /v1/models, /v1/chat/completions, "
            "/v1/responses and /v1/conversations",
            code="not_served",
        )

    return not_served
