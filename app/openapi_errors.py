"""The error statuses of every route, in the OpenAPI document.

The routes read their bodies themselves, so FastAPI documents only 200 (and
422 for path parameters); the guards and the adapters answer much more.
:func:`document_errors` adds, to every operation, the statuses it can
answer, each with the error body of the protocol that owns the path (a
schema made from that adapter's own error response, so it cannot drift):

- every operation: 403 (``Origin``) and 421 (``Host``), from ``SiteGuard``;
  with keys, 401 (no or a wrong key) and 429 (the principal's in-flight cap)
  unless the path is public;
- with path parameters: 404 (unknown id or agent); an agent card too (no
  default agent at the root, or an unknown one);
- POST/PUT/PATCH: 400 (malformed or invalid body), 404 (unknown agent or
  model), 409 (a conflicting state: a run not awaiting input, a conversation
  in use), 413 (body too large), 415 (no ``Content-Type``, or not JSON), 422
  (a body that does not validate, on ACP), 503 (a store or the server
  busy or shutting down); DELETE: 415 (a ``Content-Type`` that is not JSON).
  (A method a route does not take is 405, not listed.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import FastAPI
from starlette.responses import Response

BODY_METHODS = ("post", "put", "patch")
CARD_SUFFIX = "agent-card.json"


def schema_of(example: Any) -> dict[str, Any]:
    """A JSON schema that ``example`` (an error body) and its kin satisfy."""
    if isinstance(example, dict):
        return {
            "type": "object",
            "properties": {key: schema_of(value) for key, value in example.items()},
            "required": sorted(key for key, value in example.items() if value is not None),
        }
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, str):
        return {"type": "string"}
    return {}  # null in the example: any value


def document_errors(
    app: FastAPI,
    error_for: Callable[[str, int, str, str], Response],
    *,
    auth: bool,
    public: Iterable[str],
) -> None:
    """Make ``app.openapi()`` list every route's error statuses (computed once)."""
    public_paths = frozenset(public)
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        for path, operations in document.get("paths", {}).items():
            for method, operation in operations.items():
                statuses = [403, 421]
                if auth and path not in public_paths and not path.endswith(CARD_SUFFIX):
                    statuses += [401, 429]
                if "{" in path or path.endswith(CARD_SUFFIX):
                    statuses.append(404)
                if method in BODY_METHODS:
                    statuses += [400, 404, 409, 413, 415, 422, 503]
                elif method == "delete":
                    statuses.append(415)
                example = orjson.loads(bytes(error_for(path, 400, "message", "code").body))
                schema = schema_of(example)
                responses = operation.setdefault("responses", {})
                for status in sorted(set(statuses)):
                    responses.setdefault(
                        str(status),
                        {
                            "description": HTTPStatus(status).phrase,
                            "content": {"application/json": {"schema": schema}},
                        },
                    )
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
