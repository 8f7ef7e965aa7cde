"""watsonx Orchestrate's external-agent endpoint: ``POST /orchestrate/{agent}/chat/completions``.

Each agent is registered in Orchestrate as an external agent (``provider:
external_chat``) whose ``api_url`` is its own URL here. The thread
(``X-IBM-THREAD-ID``, else ``extra_body.thread_id``) is a session in this
adapter's memory manager under ``(agent, thread, principal)``: two API keys
never share a thread, and any replica with the shared store continues it.
Anything else under the prefix answers the adapter's error envelope.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.body_limits import BodyProblem, load_json, off_loop, refusal
from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.orchestrate.convert import to_completion, to_run
from agenthost.adapters.orchestrate.errors import (
    OrchestrateError,
    from_exception,
    from_validation_error,
    invalid,
    not_found,
)
from agenthost.adapters.orchestrate.events import ThreadEvents
from agenthost.adapters.orchestrate.schemas import CHAT_BODY, ChatRequest
from agenthost.adapters.routing import allowed_methods
from agenthost.adapters.sse import event_stream
from agenthost.agents import Message, SessionKey
from agenthost.agents.sessions import ManagedSession

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
THREAD_HEADER = "x-ibm-thread-id"


class OrchestrateAdapter:
    """Serves every exposed agent as a watsonx Orchestrate external agent."""

    root_router: APIRouter | None = None

    name = "orchestrate"
    at_bare_prefix = False

    def __init__(self, context: AdapterContext) -> None:
        self.context = context
        self._router = self._build_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        yield

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return OrchestrateError(status, message, code=code).response()

    async def chat(self, request: Request, name: str) -> Response:
        """One turn of agent ``name``: its answer (streamed or not), or an error before it."""
        principal = principal_of(request)
        agent = self.context.find_agent(principal, name)
        if agent is None:
            raise not_found("agent", name)
        body = await read_body(request)
        thread = request.headers.get(THREAD_HEADER) or (
            body.extra_body.thread_id if body.extra_body else None
        )
        session = None
        history: list[Message] = []
        if thread:
            session = ManagedSession(self.context.memory, SessionKey(agent.name, thread, principal))
            history = await session.load()
        messages, options = to_run(body, history)
        if body.stream:
            updates = agent.run_stream(messages, session=session, options=options)
            events = ThreadEvents(agent.name, thread)
            return event_stream(events.events(updates), SSE_HEADERS)
        result = await unless_disconnected(
            request.receive, agent.run(messages, session=session, options=options)
        )
        completion = to_completion(
            result,
            id=f"chatcmpl-{os.urandom(12).hex()}",
            model=agent.name,
            created=int(time.time()),
            thread_id=thread,
        )
        return Response(orjson.dumps(completion), media_type="application/json")

    def _build_router(self) -> APIRouter:
        router = APIRouter(tags=["orchestrate"])

        @router.post(
            "/{agent}/chat/completions",
            summary="One turn of an agent as a watsonx Orchestrate external agent",
            openapi_extra={
                "parameters": [
                    {
                        "name": "X-IBM-THREAD-ID",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string"},
                    }
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": CHAT_BODY}},
                },
            },
        )
        async def chat_completions(request: Request, agent: str) -> Response:
            try:
                return await self.chat(request, agent)
            except Exception as exc:
                return from_exception(exc).response()

        @router.api_route(
            "/{path:path}",
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            include_in_schema=False,
        )
        async def unknown_route(request: Request, path: str) -> Response:
            own = {**request.scope, "path": f"/{path}", "root_path": ""}
            allowed = allowed_methods(router.routes[:1], own)
            if not allowed:
                return not_found("route", f"{request.method} /{path}").response()
            message = f"{request.method} is not allowed on {request.url.path}"
            response = OrchestrateError(405, message, code="method_not_allowed").response()
            response.headers["allow"] = ", ".join(allowed)
            return response

        return router


async def read_body(request: Request) -> ChatRequest:
    """The body as a :class:`ChatRequest`: 415 for a body not declared JSON, 400 for bad
    JSON, one past the limits, or one that does not validate."""
    declared = request.headers.get("content-type")
    media = (declared or "application/json").split(";", 1)[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise OrchestrateError(
            415,
            f"the request body must be application/json, not {media!r}",
            code="unsupported_media_type",
        )
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise invalid("the request body was cut short", code="incomplete_body") from None
    try:
        value = await off_loop(len(raw), load_json, raw)
        if not isinstance(value, dict):
            raise invalid("the request body must be a JSON object")
        return ChatRequest.model_validate(value)
    except BodyProblem as problem:
        code = "invalid_json" if problem.limit is None else "body_too_complex"
        raise invalid(refusal(problem), code=code) from None
    except ValidationError as exc:
        raise from_validation_error(exc) from None
