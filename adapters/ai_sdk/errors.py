"""Errors before the stream: JSON ``{"error": {"code", "message", ...}}`` with a 4xx or
5xx status (``DefaultChatTransport`` raises the body as the error's message). Once the
stream has started a failure is its ``error`` chunk."""

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
    ErrorKind.CANCELLED: 499,
    ErrorKind.INTERRUPTED: 503,
    ErrorKind.INTERNAL: 500,
    ErrorKind.UNAVAILABLE: 503,
}
"""Each kind of failure before the stream starts as an HTTP status."""


class AISDKError(Exception):
    """A failure to answer with the adapter's JSON error body."""

    def __init__(self, status: int, message: str, *, code: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.extra = extra

    def response(self) -> Response:
        body = {"error": {"code": self.code, "message": self.message, **self.extra}}
        return Response(orjson.dumps(body), self.status, media_type="application/json")


def from_exception(exc: BaseException) -> AISDKError:
    if isinstance(exc, AISDKError):
        return exc
    kind = kind_of(exc)
    return AISDKError(ERRORS[kind], message_of(exc), code=kind.value, **details_of(exc))


def from_validation_error(exc: ValidationError) -> AISDKError:
    problems = [
        {"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]}
        for e in exc.errors(include_url=False, include_input=False)[:20]
    ]
    first = problems[0] if problems else {"loc": "", "msg": "invalid"}
    message = f"invalid chat request: {first['loc'] or 'body'}: {first['msg']}"
    return AISDKError(422, message, code="invalid_input", errors=problems)


def invalid(message: str) -> AISDKError:
    return AISDKError(422, message, code="invalid_input")
