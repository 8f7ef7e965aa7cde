"""One agent served over A2A: its request handler and its HTTP app.

Each agent gets its own SDK request handler (executor, task store, push
configs), so tasks never cross agents. Its HTTP app holds the card, the
JSON-RPC endpoint (at the agent's URL itself) and the HTTP+JSON routes,
with the SDK's 0.3 compatibility on. The SDK's ``/{tenant}`` catch-all
lives inside this app, under the agent's own prefix, so it can never
capture a route of the rest of the server.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
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
        return card_response(self.card_for(request))


def card_response(card: AgentCard) -> Response:
    return JSONResponse(agent_card_to_dict(card), headers={"Cache-Control": "no-cache"})
