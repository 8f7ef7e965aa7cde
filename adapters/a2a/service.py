"""One agent served over A2A: its request handler and its HTTP app.

Each agent gets its own SDK request handler (executor, task store, push
configs), so tasks never cross agents. Its HTTP app holds the card, the
JSON-RPC endpoint (at the agent's URL itself) and the HTTP+JSON routes,
with the SDK's 0.3 compatibility on. The SDK's ``/{tenant}`` catch-all
lives inside this app, under the agent's own prefix, so it can never
capture a route of the rest of the server.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from email.utils import formatdate

import orjson
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.a2a.users import PrincipalContextBuilder

CardFor = Callable[[Request], AgentCard]


class AgentService:
    """An agent's A2A handler and HTTP app."""

    def __init__(self, handler: DefaultRequestHandler, card_for: CardFor) -> None:
        self.handler = handler
        self.card_for = card_for
        builder = PrincipalContextBuilder()
        routes = [
            Route(AGENT_CARD_WELL_KNOWN_PATH, self.card, methods=["GET"]),
            *create_jsonrpc_routes(handler, "/", builder, enable_v0_3_compat=True),
            *create_rest_routes(handler, builder, enable_v0_3_compat=True),
        ]
        self.app = Starlette(routes=routes)

    async def card(self, request: Request) -> Response:
        return card_response(self.card_for(request), request)


CARD_MAX_AGE = 300
"""Seconds a client may cache a card (it changes only when the server restarts)."""
_STARTED = formatdate(time.time(), usegmt=True)


def card_response(card: AgentCard, request: Request) -> Response:
    """The card as JSON, with ``ETag``/``Last-Modified`` so that caches revalidate cheaply."""
    body = orjson.dumps(agent_card_to_dict(card), option=orjson.OPT_SORT_KEYS)
    headers = {
        "Cache-Control": f"public, max-age={CARD_MAX_AGE}",
        "ETag": f'W/"{hashlib.sha256(body).hexdigest()[:32]}"',
        "Last-Modified": _STARTED,
    }
    candidates = request.headers.get("if-none-match", "")
    if headers["ETag"].removeprefix("W/") in (
        c.strip().removeprefix("W/") for c in candidates.split(",")
    ):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
