"""One agent served over A2A: its request handler and its HTTP app.

Each agent gets its own SDK request handler (executor, task store, push
configs), so tasks never cross agents. Its JSON-RPC endpoint (at the
agent's URL itself) and its HTTP+JSON ``message:send``/``message:stream``
are our own fronts on that handler (:mod:`agenthost.adapters.a2a.rpc`,
:mod:`agenthost.adapters.a2a.rest`); its HTTP app holds the card, the SDK's
JSON-RPC route (what the front hands on: 0.3 methods, malformed requests)
and the HTTP+JSON routes,
with the SDK's 0.3 compatibility on (HTTP+JSON errors as the spec's table
says: :mod:`agenthost.adapters.a2a.statuses`). Its 0.3 HTTP+JSON streams
(:class:`Eager03Adapter`) wait for their first event before answering, as
its 1.0 ones do, so that an error raised before any event (an unknown task's
``subscribe``) is the protocol's 4xx, not a stream cut after its 200. The
SDK's ``/{tenant}`` catch-all lives inside this app, under the agent's own prefix, so it can never
capture a route of the rest of the server.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable
from email.utils import formatdate
from typing import Any

import orjson
from a2a.compat.v0_3.rest_adapter import REST03Adapter
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.routes.common import create_event_source_response
from a2a.types import AgentCard
from a2a.utils import json_utils
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.error_handlers import rest_stream_error_handler
from a2a.utils.errors import InvalidRequestError
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.a2a.rest import HTTPJSONFront
from agenthost.adapters.a2a.rpc import JSONRPCFront
from agenthost.adapters.a2a.statuses import A2A_JSON, SpecErrors
from agenthost.adapters.a2a.users import PrincipalContextBuilder
from agenthost.adapters.bodies import read_body, replaying

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
            *(
                Route(path, endpoint, methods=[method])
                for (path, method), endpoint in Eager03Adapter(handler, builder).routes().items()
            ),
            *create_rest_routes(handler, builder),
        ]
        self.app = SpecErrors(UTF8Bodies(Starlette(routes=routes)))
        self.rpc = JSONRPCFront(handler, builder, _AtAgentURL(self.app))
        """The JSON-RPC endpoint (``POST`` at the agent's URL, with or without ``/``)."""
        self.send = HTTPJSONFront(handler, builder, self.app)
        """HTTP+JSON ``POST .../message:send`` and ``.../message:stream``."""

    async def card(self, request: Request) -> Response:
        return card_response(self.card_for(request), request)


class Eager03Adapter(REST03Adapter):
    """The SDK's 0.3 HTTP+JSON routes, whose streams start only once their first event is in.

    The SDK's 0.3 adapter answers 200 and starts the event stream before the
    handler has run, so an error the handler raises at once (``TaskNotFoundError``
    for an unknown task's ``subscribe``, ``UnsupportedOperationError`` for a
    finished one) ends the response with a 500. Taking the first event before
    answering (what the SDK's 1.0 dispatcher does) lets its error handler
    answer such an error with the error's own status and 0.3 body.
    """

    @rest_stream_error_handler
    async def _handle_streaming_request(
        self,
        method: Callable[[Request, ServerCallContext], AsyncIterable[Any]],
        request: Request,
    ) -> EventSourceResponse:
        try:
            await request.body()
        except (ValueError, RuntimeError, OSError) as e:
            raise InvalidRequestError(message=f"Failed to pre-consume request body: {e}") from e
        stream = aiter(method(request, self._context_builder.build(request)))
        try:
            first = await anext(stream)
        except StopAsyncIteration:
            return create_event_source_response(iter([]))

        async def events() -> AsyncIterator[str]:
            yield json_utils.dumps(first)
            async for item in stream:
                yield json_utils.dumps(item)

        return create_event_source_response(events())


class _AtAgentURL:
    """``app`` seeing a ``POST`` at the agent's URL as its JSON-RPC route, ``/``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if not path.endswith("/"):
            scope = {**scope, "root_path": path, "path": path + "/"}
        await self.app(scope, receive, send)


class UTF8Bodies:
    """Refuses an HTTP+JSON body that is not UTF-8 with the protocol's 400.

    The SDK's HTTP+JSON routes decode the body before parsing it and answer
    a 500 for bytes that are not UTF-8 (its JSON-RPC endpoint, at the agent's
    URL itself, answers -32700 on its own). Bodies are already bounded by the
    app's body limit, so reading one whole here costs no more memory than the
    SDK's own read.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        relative = scope["path"][len(scope.get("root_path", "")) :]
        if scope["type"] != "http" or scope["method"] != "POST" or relative in ("", "/"):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        if body is None:
            return  # the client is gone: nobody to answer
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            error = {
                "code": 400,
                "status": "INVALID_ARGUMENT",
                "message": "the request body is not valid UTF-8 JSON",
            }
            await Response(orjson.dumps({"error": error}), 400, media_type=A2A_JSON)(
                scope, receive, send
            )
            return
        await self.app(scope, replaying(body, receive), send)


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
