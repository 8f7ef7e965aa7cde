"""A fast lane to the hottest routes, past FastAPI's route machinery.

FastAPI 0.165 finds a route of an included router through several layers
(``_IncludedRouter._match``, effective route contexts, dependency solving,
``request_response``): on the OpenAI chat echo, half of a request's CPU
(``bench/protocols.py``: 795 → 412 µs). An adapter
may name a few routes (``asgi_routes``: method and path under its prefix →
a plain ASGI app that answers exactly as the FastAPI route does, e.g.
:func:`agenthost.adapters.endpoints.asgi_endpoint`); this pure
ASGI middleware, the innermost of the app's own, sends a request whose
method and path match one exactly straight to it. Everything else — other
methods (HEAD, 405s), a trailing slash, a ``root_path`` — goes on through
FastAPI as before, and the routes stay in the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send


class ExactRoutes:
    """Sends ``(method, path)`` listed in ``routes`` to their ASGI app; the rest to ``app``."""

    def __init__(self, app: ASGIApp, routes: Mapping[tuple[str, str], ASGIApp]) -> None:
        self.app = app
        self.routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            route = self.routes.get((scope["method"], scope["path"]))
            if route is not None:
                await route(scope, receive, send)
                return
        await self.app(scope, receive, send)
