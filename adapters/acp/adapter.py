"""IBM's Agent Communication Protocol (REST), the surface acp-sdk clients speak.

The app mounts the router (at ``/acp`` by default). Sessions live in this
adapter's memory manager under ``(agent, session id, principal)``: a
session's history is per agent, and a run in a session sees the earlier runs
of that session with that agent; the session's history across agents, in
time order, is its timeline (:mod:`agenthost.adapters.acp.timeline`). Runs
live in a bounded store of their own (and, with a shared store, in it too:
:mod:`agenthost.adapters.acp.shared`).

IBM's ACP has merged into A2A; this surface serves existing ACP clients.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from acp_sdk.models import AgentsListResponse, Session
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.acp import detached
from agenthost.adapters.acp.convert import history_message, to_history, to_manifest
from agenthost.adapters.acp.errors import ACPProblem, ACPRoute, not_found
from agenthost.adapters.acp.runs import RunStore
from agenthost.adapters.acp.runs_api import RunsAPI
from agenthost.adapters.acp.shared import SharedRuns
from agenthost.adapters.acp.timeline import read_timeline
from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.leases import DEFAULT_LEASE_SECONDS
from agenthost.adapters.routing import allowed_methods
from agenthost.agents import Conversation, SessionKey
from agenthost.agents import Message as AgentMessage

DEFAULT_MAX_RUNS = 1000
# Request bodies in the OpenAPI document (the routes read them themselves): a
# subset the server accepts in full, which schemathesis checks.
_MODES = {"enum": ["sync", "async", "stream"]}
_TEXT_PART = {
    "type": "object",
    "required": ["content"],
    "properties": {"content": {"type": "string"}, "content_type": {"enum": ["text/plain"]}},
    "additionalProperties": False,
}
_INPUT = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["parts"],
        "properties": {
            "role": {"enum": ["user"]},
            "parts": {"type": "array", "minItems": 1, "items": _TEXT_PART},
        },
        "additionalProperties": False,
    },
}
NEW_RUN = {
    "type": "object",
    "required": ["agent_name", "input"],
    "properties": {"agent_name": {"type": "string"}, "input": _INPUT, "mode": _MODES},
    "additionalProperties": False,
}
RESUME = {
    "type": "object",
    "required": ["await_resume", "mode"],
    "properties": {
        "await_resume": {
            "type": "object",
            "required": ["message"],
            "properties": {"message": _INPUT["items"]},
        },
        "mode": _MODES,
    },
}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


DEFAULT_MAX_RUN_BYTES = 64 * 1024 * 1024
DEFAULT_RUN_TTL = 3600.0


class ACPAdapter:
    """Serves every exposed agent as an ACP agent."""

    root_router: APIRouter | None = None

    name = "acp"
    at_bare_prefix = False

    def __init__(
        self,
        context: AdapterContext,
        *,
        max_runs: int = DEFAULT_MAX_RUNS,
        run_ttl: float = DEFAULT_RUN_TTL,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_run_bytes: int = DEFAULT_MAX_RUN_BYTES,
    ) -> None:
        self.context = context
        self.runs = RunStore(max_runs=max_runs, ttl=run_ttl, max_bytes=max_run_bytes)
        self.shared = SharedRuns.of(context, lease_seconds)
        # async and stream runs run (and resume) on any replica with the agents of this server.
        self.detached = detached.DetachedRuns(context, self.runs, self.shared)
        context.durable.handle(detached.PROTOCOL, self.detached)
        self.api = RunsAPI(context, self.runs, self.shared, self.detached)
        self._router = self._build_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        listener = None
        if self.shared is not None:
            listener = asyncio.create_task(self.shared.listen(self.api.cancel_here))
        try:
            yield
        finally:
            if listener is not None:
                listener.cancel()
                await asyncio.wait([listener])
            # A durable run's task is the server's durable runs' to stop (or hand over).
            tasks = [
                record.task
                for record in self.runs.busy()
                if record.task is not None and not record.durable
            ]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)

    def bounded_stores(self) -> list[tuple[str, Any]]:
        """The run store (the app counts its evictions)."""
        return [("runs", self.runs)]

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return ACPProblem(status, message, code=code).response()

    def _build_router(self) -> APIRouter:
        router = APIRouter(route_class=ACPRoute, tags=["acp"])
        context, runs = self.context, self.api

        @router.get("/ping", summary="Alive")
        async def ping() -> Response:
            return _json({})

        @router.get("/agents", summary="The agents, with their manifests")
        async def list_agents(request: Request) -> Response:
            agents = context.agents_for(principal_of(request)).values()
            listing = AgentsListResponse(agents=[to_manifest(agent) for agent in agents])
            return Response(listing.model_dump_json(), media_type="application/json")

        @router.get("/agents/{name}", summary="One agent's manifest")
        async def read_agent(request: Request, name: str) -> Response:
            agent = context.find_agent(principal_of(request), name)
            if agent is None:
                raise not_found("agent", name)
            return Response(to_manifest(agent).model_dump_json(), media_type="application/json")

        @router.post(
            "/runs",
            summary="Start a run (mode sync, async or stream)",
            openapi_extra=_json_body(NEW_RUN),
        )
        async def create_run(request: Request) -> Response:
            return await runs.create(request)

        @router.get("/runs/{run_id}", summary="A run")
        async def read_run(request: Request, run_id: str) -> Response:
            return await runs.read(request, run_id)

        @router.post(
            "/runs/{run_id}",
            summary="Resume a run that awaits input",
            openapi_extra=_json_body(RESUME),
        )
        async def resume_run(request: Request, run_id: str) -> Response:
            return await runs.resume(request, run_id)

        @router.post("/runs/{run_id}/cancel", summary="Cancel a run")
        async def cancel_run(request: Request, run_id: str) -> Response:
            return await runs.cancel(request, run_id)

        @router.get("/runs/{run_id}/events", summary="A run's events so far")
        async def list_run_events(request: Request, run_id: str) -> Response:
            return await runs.events(request, run_id)

        @router.get("/sessions/{session_id}", summary="A session and its history")
        async def read_session(request: Request, session_id: str) -> Response:
            id, found = await self._session(request, session_id)
            # A conversation every protocol shares is read whole, agent by agent: the
            # timeline keeps only what ran over ACP.
            shared = self.context.shared_sessions & found.keys()
            timeline = None if shared else await self._timeline(request, id)
            if timeline is not None:
                history = [
                    str(request.url_for("acp_timeline", session_id=id, index=index))
                    for index in range(len(timeline))
                ]
            else:  # a session stored before timelines: agent by agent
                history = [
                    str(request.url_for("acp_history", session_id=id, agent=agent, index=index))
                    for agent, conversation in found.items()
                    for index in range(len(to_history(agent, conversation.messages)))
                ]
            session = Session.model_validate({"id": id, "history": history})
            return Response(session.model_dump_json(), media_type="application/json")

        @router.get(
            "/sessions/{session_id}/history/{index}",
            name="acp_timeline",
            summary="One message of a session's history, in time order (GET /sessions/{id})",
        )
        async def read_timeline_message(request: Request, session_id: str, index: str) -> Response:
            id, _ = await self._session(request, session_id)
            timeline = await self._timeline(request, id) or []
            position = int(index) if index.isdecimal() else -1
            if not 0 <= position < len(timeline):
                raise not_found("message", f"{session_id}/{index}")
            message = timeline[position]
            body = history_message(message.name or "", message).model_dump_json()
            return Response(body, media_type="application/json")

        @router.get(
            "/sessions/{session_id}/history/{agent}/{index}",
            name="acp_history",
            summary="One message of a session's history (the URLs GET /sessions/{id} lists)",
        )
        async def read_history(
            request: Request, session_id: str, agent: str, index: str
        ) -> Response:
            _, found = await self._session(request, session_id)
            history = to_history(agent, found[agent].messages) if agent in found else []
            position = int(index) if index.isdecimal() else -1
            if not 0 <= position < len(history):
                raise not_found("message", f"{session_id}/{agent}/{index}")
            return Response(history[position].model_dump_json(), media_type="application/json")

        @router.api_route(
            "/{path:path}",
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            include_in_schema=False,
        )
        async def unknown_route(request: Request, path: str) -> Response:
            # Last: anything else under the prefix gets ACP's error body too:
            # 405 with Allow for a known path, else 404.
            own = {**request.scope, "path": f"/{path}", "root_path": ""}  # the router's paths
            allowed = allowed_methods(router.routes, own)
            if not allowed:
                raise not_found("route", f"{request.method} /{path}")
            message = f"{request.method} is not allowed on {request.url.path}"
            response = ACPProblem(405, message, code="method_not_allowed").response()
            response.headers["allow"] = ", ".join(allowed)
            return response

        return router

    async def _timeline(self, request: Request, id: uuid.UUID) -> list[AgentMessage] | None:
        principal = principal_of(request)
        agents = list(self.context.agents_for(principal))
        return await read_timeline(self.context.memory, str(id), principal, agents)

    async def _session(
        self, request: Request, session_id: str
    ) -> tuple[uuid.UUID, dict[str, Conversation]]:
        """The session's conversations with each agent the caller may use; 404 if none."""
        try:
            id = uuid.UUID(session_id)
        except ValueError:
            raise not_found("session", session_id) from None
        principal = principal_of(request)
        found = {}
        for agent in self.context.agents_for(principal):
            conversation = await self.context.memory.get(SessionKey(agent, str(id), principal))
            if conversation is not None:
                found[agent] = conversation
        if not found:
            raise not_found("session", session_id)
        return id, found


def _json(content: object) -> Response:
    return Response(orjson.dumps(content), media_type="application/json")
