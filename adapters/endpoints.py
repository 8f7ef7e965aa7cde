"""An endpoint as a plain ASGI app, for the app's fast lane (:mod:`agenthost.app.lanes`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]


def asgi_endpoint(endpoint: Endpoint, on_error: Callable[[Exception], Response]) -> ASGIApp:
    """``endpoint`` as an ASGI app; a failure before the response is ``on_error``'s answer.

    What FastAPI's route does for an endpoint that takes only the request
    (no dependencies, no response model) with the adapter's error handler
    around the call, minus finding the route.
    """

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            response = await endpoint(Request(scope, receive, send))
        except Exception as exc:
            response = on_error(exc)
        await response(scope, receive, send)

    return app
