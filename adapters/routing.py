"""The methods a path allows, for a 405's ``Allow`` header.

Starlette's router answers 405 with the methods of the first route whose
path matches, so ``/v1/conversations/{id}`` (GET, POST and DELETE, three
routes) would say ``Allow: GET``. This asks every route, included routers
too, which methods it serves at the path. Routes left out of the schema
(catch-alls) do not count; HEAD goes with GET.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.routing import BaseRoute, Match
from starlette.types import Scope

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route of ``routes`` serves at ``scope``'s path."""
    routes = [r for r in routes if getattr(r, "include_in_schema", True)]
    allowed = {
        method
        for method in METHODS
        if any(route.matches({**scope, "method": method})[0] is Match.FULL for route in routes)
    }
    if "GET" in allowed:
        allowed.add("HEAD")  # app.head.HeadAsGet answers HEAD wherever GET is served
    return [method for method in METHODS if method in allowed]
