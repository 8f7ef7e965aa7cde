"""The playground: a page at ``/`` (and ``/playground``) to talk to every agent.

Plain HTML, CSS and JavaScript from the package (``app/playground/``), no
build step and nothing fetched from another host. The page chats over
``/v1/responses`` (streamed, stored, continued with ``previous_response_id``)
or the AI SDK UI message stream (``/ai-sdk/{agent}``, as ``useChat`` does it,
tool approvals included: ``ai-sdk.js``), showing the raw wire; it builds each
protocol's connect snippets from ``/playground/agents.json``: the agents the
caller's key may see, and the server's own URLs. The page and its files are
public (like ``/docs``); the JSON needs a key when keys are on.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from agenthost.adapters.base import HasPublicURL, may_use, principal_of
from agenthost.adapters.sse import event_stream
from agenthost.agents import Agent
from agenthost.agents.tools.reach import callable_tools
from agenthost.app.protocols import ADAPTERS

_STATIC = Path(__file__).parent / "playground"
# The only files served (by name: no directory listing, no path to walk).
ASSETS = {"app.js": "text/javascript", "ai-sdk.js": "text/javascript", "style.css": "text/css"}
PAGE_PATHS = ("/", "/playground", *(f"/playground/{name}" for name in ASSETS))
"""Public like /docs: a browser sends no API key for the page itself."""
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
# The page runs only its own files and talks only to this server.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def build_router() -> APIRouter:
    """``/``, ``/playground``, its files and ``/playground/agents.json``."""
    router = APIRouter(include_in_schema=False)

    async def page() -> FileResponse:
        headers = {**_HEADERS, "Content-Security-Policy": _CSP}
        return FileResponse(_STATIC / "index.html", media_type="text/html", headers=headers)

    router.add_api_route("/", page, methods=["GET"])
    router.add_api_route("/playground", page, methods=["GET"])
    for name, media_type in ASSETS.items():
        router.add_api_route(f"/playground/{name}", _asset(name, media_type), methods=["GET"])

    @router.get("/playground/agents.json")
    async def agents(request: Request) -> Response:
        return Response(orjson.dumps(describe(request)), media_type="application/json")

    @router.get("/playground/runs.json")
    async def runs(request: Request) -> Response:
        """The caller's latest detached runs of ``?agent=`` (any protocol), newest first."""
        agent = request.query_params.get("agent", "")
        host, principal = request.app.state.host, principal_of(request)
        if agent not in visible_agents(request):
            return _not_found(f"no agent {agent!r}")
        records = await host.durable.log.recent(principal, agent)
        listed = [
            {
                "id": r.id,
                "protocol": r.protocol,
                "status": r.status,
                "created_at": r.created_at,
                "attempt": r.attempt,
                "error": r.error,
            }
            for r in records
        ]
        return Response(orjson.dumps({"runs": listed}), media_type="application/json")

    @router.get("/playground/runs/{run_id}/events")
    async def run_events(request: Request, run_id: str) -> Response:
        """One of the caller's runs as its log keeps it: each event a ``data:`` line (its
        JSON) with its sequence number as the ``id:``, replayed and then followed."""
        durable = request.app.state.host.durable
        record = await durable.log.get(run_id)
        if record is None or record.principal != principal_of(request):
            return _not_found(f"no run {run_id!r}")
        raw = request.query_params.get("after", "-1")
        after = int(raw) if raw.lstrip("-").isdigit() else -1

        async def events() -> AsyncIterator[bytes]:
            async for seq, event in durable.events(run_id, after):
                yield b"id: %d\ndata: %s\n\n" % (seq, event)

        return event_stream(events(), {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return router


def visible_agents(request: Request) -> list[str]:
    """The agents the caller's key may see."""
    host, principal = request.app.state.host, principal_of(request)
    return [name for name in host.registry if may_use(host.allow.get(name), principal)]


def _not_found(message: str) -> Response:
    body = orjson.dumps({"error": {"message": message, "code": "not_found"}})
    return Response(body, status_code=404, media_type="application/json")


def describe(request: Request) -> dict[str, Any]:
    """What the page shows: the caller's agents and how each protocol reaches them."""
    app = request.app
    host, adapters = app.state.host, app.state.adapters
    registry, principal = host.registry, principal_of(request)
    served = [name for name, mount in ADAPTERS.items() if mount.prefix in adapters]
    stdio = {"mcp_stdio": "mcp", "acp_zed": "acp_zed"}
    agents = []
    for name, agent in registry.items():
        if not may_use(host.allow.get(name), principal):
            continue  # hidden from this key, as in every other listing
        protocols = [p for p in served if name in registry.exposed_by(p)]
        protocols += [s for s, p in stdio.items() if name in registry.exposed_by(p)]
        agents.append({**_agent(agent), "protocols": protocols})
    settings = host.settings
    return {
        "base_url": str(request.base_url).rstrip("/"),
        "auth": host.auth,
        "prefixes": {name: ADAPTERS[name].prefix for name in served},
        # Where a protocol's clients reach the server, when its settings say (A2A's cards).
        **{
            f"{name}_public_url": protocol.public_url
            for name, protocol in settings.protocols.items()
            if isinstance(protocol, HasPublicURL)
        },
        "config": str(Path(settings.config).resolve()),
        "command": _command(),
        "agents": agents,
    }


def _agent(agent: Agent) -> dict[str, Any]:
    model = getattr(agent, "model", None)
    steps = [getattr(s, "name", "") for s in getattr(agent, "steps", ())]
    return {
        "name": agent.name,
        "description": agent.description,
        "model": getattr(model, "name", None),
        "kind": type(agent).__name__,
        "tools": [tool.name for tool in callable_tools(agent)],
        "steps": [s for s in steps if s],
    }


def _command() -> str:
    """The ``agenthost`` command beside this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "agenthost"
    if beside.exists():
        return str(beside)
    return shutil.which("agenthost") or "agenthost"


def _asset(name: str, media_type: str) -> Any:
    path = _STATIC / name

    async def asset() -> FileResponse:
        return FileResponse(path, media_type=media_type, headers=_HEADERS)

    return asset
