"""Errors in the AG-UI adapter's shape.

AG-UI defines no HTTP error body: a failure before the stream starts (an
unknown agent, a malformed ``RunAgentInput``) answers JSON
``{"error": {"code", "message", "kind"?, "retryable"?}}`` with a 4xx or 5xx
status, which ``@ag-ui/client`` raises as an HTTP error; a failure once the
stream has started is its ``RUN_ERROR`` event (:mod:`.events`), whose
``code`` is the failure's kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson
from pydantic import ValidationError
from starlette.responses import Response

from agenthost.agents import ErrorKind, kind_of
from agenthost.agents.errors import details_of, message_of

ERRORS: Final[Mapping[ErrorKind, int]] = {
    ErrorKind.BUSY: 429,
    ErrorKind.TIMEOUT: 504,
    ErrorKind.REFUSED: 403,
    ErrorKind.LIMIT_EXCEEDED: 400,
    ErrorKind.BAD_INPUT: 422,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.UPSTREAM: 502,
    # Nobody reads it; 499 (nginx's "client closed request") marks it in the log.
    ErrorKind.CANCELLED: 499,
    ErrorKind.INTERRUPTED: 503,
    ErrorKind.INTERNAL: 500,
    ErrorKind.UNAVAILABLE: 503,
}
"""Each kind of failure before the stream starts as an HTTP status."""


class AGUIError(Exception):
    """A failure to answer with the adapter's JSON error body."""

    def __init__(self, status: int, message: str, *, code: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}

    def response(self) -> Response:
        return Response(orjson.dumps(self.body()), self.status, media_type="application/json")


def from_exception(exc: BaseException) -> AGUIError:
    """An agent's failure (or a bug: its message names only its type) as an error body."""
    if isinstance(exc, AGUIError):
        return exc
    kind = kind_of(exc)
    return AGUIError(ERRORS[kind], message_of(exc), code=kind.value, **details_of(exc))


def from_validation_error(exc: ValidationError) -> AGUIError:
    """A ``RunAgentInput`` that does not validate: 422 naming each bad field."""
    problems = [
        {"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]}
        for e in exc.errors(include_url=False, include_input=False)[:20]
    ]
    first = problems[0] if problems else {"loc": "", "msg": "invalid"}
    message = f"invalid RunAgentInput: {first['loc'] or 'body'}: {first['msg']}"
    return AGUIError(422, message, code="invalid_input", errors=problems)


def not_found(what: str, name: str) -> AGUIError:
    return AGUIError(404, f"{what} {name!r} not found", code=f"{what}_not_found")
