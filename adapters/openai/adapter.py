"""The OpenAI-compatible surface: ``/models``, ``/chat/completions``, ``/responses``.

The app mounts the router (at ``/v1`` by default). Chat Completions is
stateless; the Responses API keeps stored responses and conversations in
this adapter's own memory manager.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from adapters.base import AdapterContext, principal_of
from adapters.openai import chat, responses
from adapters.openai.errors import OpenAIError, OpenAIRoute
from adapters.openai.http import find_agent, json_response
from agents import Agent


class OpenAIAdapter:
    """Serves every agent as an OpenAI model."""

    name = "openai"

    def __init__(self, context: AdapterContext) -> None:
        self.context = context
        self._created = int(time.time())
        self._router = self._build_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.context.memory.aclose()

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
        context, memory = self.context, self.context.memory

        def visible(request: Request) -> Mapping[str, Agent]:
            return context.agents_for(principal_of(request))

        @router.get("/models", summary="List the agents as models")
        async def list_models(request: Request) -> Response:
            data = [self._model(agent) for agent in visible(request).values()]
            return json_response({"object": "list", "data": data})

        @router.get("/models/{model_id:path}", summary="One agent as a model")
        async def get_model(request: Request, model_id: str) -> Response:
            return json_response(self._model(find_agent(visible(request), model_id)))

        @router.post("/chat/completions", summary="Chat Completions (streamed or not)")
        async def chat_completions(request: Request) -> Response:
            return await chat.create_chat_completion(request, visible(request))

        @router.post("/responses", summary="Responses API (streamed or not)")
        async def create_response(request: Request) -> Response:
            principal = principal_of(request)
            agents = context.agents_for(principal)
            return await responses.create_response(request, agents, memory, principal)

        @router.get("/responses/{response_id}", summary="A stored response")
        async def get_response(request: Request, response_id: str) -> Response:
            return await responses.get_response(response_id, memory, principal_of(request))

        @router.delete("/responses/{response_id}", summary="Delete a stored response")
        async def delete_response(request: Request, response_id: str) -> Response:
            return await responses.delete_response(response_id, memory, principal_of(request))

        return router
