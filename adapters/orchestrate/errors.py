"""Errors in the shape Orchestrate shows its user.

Orchestrate calls an external agent as an OpenAI-like chat endpoint, so a
failure before the answer starts is OpenAI's error envelope with a 4xx or
5xx status: ``{"error": {"message", "type", "code", "kind"?, "retryable"?}}``
(``message`` is what the user reads). A failure once a stream has begun
cannot change the status: it is the answer's last ``thread.message.delta``,
whose text names the failure (what Orchestrate's chat shows), then ``[DONE]``
(:mod:`.events`).
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
    ErrorKind.BAD_INPUT: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.UPSTREAM: 502,
    # Nobody reads it; 499 (nginx's "client closed request") marks it in the log.
    ErrorKind.CANCELLED: 499,
    ErrorKind.INTERRUPTED: 503,
    ErrorKind.INTERNAL: 500,
    ErrorKind.UNAVAILABLE: 503,
}
"""Each kind of failure before the answer starts as an HTTP status."""


def _type(status: int) -> str:
    return "invalid_request_error" if status < 500 else "server_error"


class OrchestrateError(Exception):
    """A failure to answer with the envelope."""

    def __init__(self, status: int, message: str, *, code: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.extra = extra

    def body(self) -> dict[str, Any]:
        error = {"message": self.message, "type": _type(self.status), "code": self.code}
        return {"error": {**error, **self.extra}}

    def response(self) -> Response:
        retry_after = self.extra.get("retryAfter")
        headers = {"retry-after": str(round(retry_after))} if retry_after is not None else None
        return Response(orjson.dumps(self.body()), self.status, headers, "application/json")


def invalid(message: str, *, code: str = "invalid_request") -> OrchestrateError:
    return OrchestrateError(400, message, code=code)


def from_exception(exc: BaseException) -> OrchestrateError:
    """Any failure (a bug's message names only its type) as the envelope."""
    if isinstance(exc, OrchestrateError):
        return exc
    if isinstance(exc, ValidationError):
        return from_validation_error(exc)
    kind = kind_of(exc)
    return OrchestrateError(ERRORS[kind], message_of(exc), code=kind.value, **details_of(exc))


def from_validation_error(exc: ValidationError) -> OrchestrateError:
    """A body that does not validate: 400 naming the first bad field, as OpenAI's ``param``."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    message = f"{where}: {error['msg']}" if where else error["msg"]
    return OrchestrateError(400, message, code="invalid_request", param=where or None)


def not_found(what: str, name: str) -> OrchestrateError:
    return OrchestrateError(404, f"{what} {name!r} not found", code=f"{what}_not_found")
