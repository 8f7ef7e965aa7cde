"""AG-UI 1.0 over HTTP: ``POST /ag-ui/{agent}`` with a ``RunAgentInput``, answered by
an SSE stream of AG-UI events (what ``@ag-ui/client``'s ``HttpAgent`` speaks).

A thread (``threadId``) is a session in this adapter's memory manager under
``(agent, threadId, principal)``: the server keeps its history, so two
callers never share a thread and any replica with the shared store continues
it. Anything else under the prefix answers the adapter's JSON error body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ag_ui.core import RunAgentInput
from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.ag_ui.convert import to_run
from agenthost.adapters.ag_ui.errors import (
    AGUIError,
    from_exception,
    from_validation_error,
    not_found,
)
from agenthost.adapters.ag_ui.events import AGUIEvents
from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.body_limits import BodyProblem, load_json, off_loop, refusal
from agenthost.adapters.routing import allowed_methods
from agenthost.adapters.sse import event_stream
from agenthost.agents import SessionKey
from agenthost.agents.sessions import ManagedSession

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

RUN_AGENT_INPUT = {
    "type": "object",
    "required": ["threadId", "runId", "messages"],
    "properties": {
        "threadId": {"type": "string"},
        "runId": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object"}},
        "tools": {"type": "array", "items": {"type": "object"}},
        "context": {"type": "array", "items": {"type": "object"}},
        "resume": {"type": "array", "items": {"type": "object"}},
    },
}
"""The body in the OpenAPI document (the route reads and validates it itself)."""


class AGUIAdapter:
    """Serves every exposed agent as an AG-UI agent."""

    root_router: APIRouter | None = None

    name = "ag_ui"
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
        return AGUIError(status, message, code=code).response()

    async def run(self, request: Request, name: str) -> Response:
        """One run of agent ``name``: the events of the run, or an error before it starts."""
        principal = principal_of(request)
        agent = self.context.find_agent(principal, name)
        if agent is None:
            raise not_found("agent", name)
        body = await read_input(request)
        session = ManagedSession(
            self.context.memory, SessionKey(agent.name, body.thread_id, principal)
        )
        messages, options = to_run(body, await session.load())
        updates = agent.run_stream(messages, session=session, options=options)
        events = AGUIEvents(agent.name, body.thread_id, body.run_id)
        return event_stream(events.events(updates), SSE_HEADERS)

    def _build_router(self) -> APIRouter:
        router = APIRouter(tags=["ag-ui"])

        @router.post(
            "/{agent}",
            summary="Run an agent: a RunAgentInput in, an SSE stream of AG-UI events out",
            openapi_extra={
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": RUN_AGENT_INPUT}},
                }
            },
        )
        async def run_agent(request: Request, agent: str) -> Response:
            try:
                return await self.run(request, agent)
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
            response = AGUIError(405, message, code="method_not_allowed").response()
            response.headers["allow"] = ", ".join(allowed)
            return response

        return router


async def read_input(request: Request) -> RunAgentInput:
    """The body as a ``RunAgentInput``: 415 for a body not declared JSON, 400 for bad
    JSON or one past the limits, 422 for one that does not validate."""
    declared = request.headers.get("content-type")
    media = (declared or "application/json").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise AGUIError(
            415,
            f"the request body must be application/json, not {media!r}",
            code="unsupported_media_type",
        )
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise AGUIError(400, "the request body was cut short", code="incomplete_body") from None
    try:
        value = await off_loop(len(raw), load_json, raw)
        return RunAgentInput.model_validate(value)
    except BodyProblem as problem:
        code = "invalid_json" if problem.limit is None else "body_too_complex"
        raise AGUIError(400, refusal(problem), code=code) from None
    except ValidationError as exc:
        raise from_validation_error(exc) from None
