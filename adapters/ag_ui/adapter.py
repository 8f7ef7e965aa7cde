"""AG-UI 1.0 over HTTP: ``POST /ag-ui/{agent}`` with a ``RunAgentInput``, answered by
an SSE stream of AG-UI events (what ``@ag-ui/client``'s ``HttpAgent`` speaks).

A thread (``threadId``) is a session in this adapter's memory manager under
``(agent, threadId, principal)``: the server keeps its history, so two
callers never share a thread and any replica with the shared store continues
it. Anything else under the prefix answers the adapter's JSON error body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

from fastapi import APIRouter
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.ag_ui.errors import AGUIError, from_exception, not_found
from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.body_limits import BodyProblem, load_json, off_loop, refusal
from agenthost.adapters.deferred import imported
from agenthost.adapters.routing import allowed_methods
from agenthost.agents import Agent

Respond = Callable[[AdapterContext, Agent, str, Any], Awaitable[Response]]
""":func:`agenthost.adapters.ag_ui.turn.respond`: the run a parsed body asks for."""

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
        self._respond: Respond | None = None  # the SDK's side, imported on the first run

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
        value = await read_input(request)
        if self._respond is None:
            turn = await imported("agenthost.adapters.ag_ui.turn")
            self._respond = cast(Respond, turn.respond)
        return await self._respond(self.context, agent, principal, value)

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


async def read_input(request: Request) -> Any:
    """The body's JSON value: 415 for a body not declared JSON, 400 for bad JSON or one
    past the limits (:mod:`.turn` validates it as a ``RunAgentInput``)."""
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
        return await off_loop(len(raw), load_json, raw)
    except BodyProblem as problem:
        code = "invalid_json" if problem.limit is None else "body_too_complex"
        raise AGUIError(400, refusal(problem), code=code) from None
