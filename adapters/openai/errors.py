"""Errors in the OpenAI envelope: ``{"error": {message, type, param, code}}``.

One place maps every failure of this adapter to a status and that body.
Failures that retrying cannot fix carry ``x-should-retry: false`` so the
OpenAI SDK does not run a failing agent three times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from agenthost.agents import AgentError, ErrorKind

logger = logging.getLogger("agenthost.openai")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


class OpenAIError(Exception):
    """A failure to answer in the OpenAI error envelope."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        type: str | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.retryable = retryable
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.type = type or _TYPES.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> Response:
        final = (self.status >= 500 or self.status == 429) and not self.retryable
        headers = {"x-should-retry": "false"} if final else {}
        if self.retry_after is not None:
            headers["retry-after"] = str(round(self.retry_after))
        return Response(orjson.dumps(self.body()), self.status, headers, "application/json")


@dataclass(frozen=True, slots=True)
class Wire:
    """How one kind of failure reads here: a status, an error ``type`` and ``code``."""

    status: int
    code: str
    type: str | None = None


ERRORS: Final[Mapping[ErrorKind, Wire]] = {
    ErrorKind.BUSY: Wire(429, "rate_limit_exceeded"),
    ErrorKind.TIMEOUT: Wire(504, "run_timeout"),
    ErrorKind.REFUSED: Wire(403, "refused", "invalid_request_error"),
    ErrorKind.LIMIT_EXCEEDED: Wire(400, "limit_exceeded"),
    ErrorKind.BAD_INPUT: Wire(400, "invalid_request"),
    ErrorKind.NOT_FOUND: Wire(404, "not_found"),
    ErrorKind.UPSTREAM: Wire(502, "upstream_error", "api_error"),
    # Nobody reads it; 499 (nginx's "client closed request") marks it in the access log.
    ErrorKind.CANCELLED: Wire(499, "client_closed_request"),
    # Retryable: another replica (or this one, restarted) can take it.
    ErrorKind.INTERRUPTED: Wire(503, "server_shutting_down"),
    ErrorKind.INTERNAL: Wire(500, "agent_error"),
    ErrorKind.UNAVAILABLE: Wire(503, "store_unavailable"),
}
"""Each kind of run failure in the OpenAI envelope."""


def from_exception(exc: Exception) -> OpenAIError:
    """Any failure of a run → the error the client gets."""
    if isinstance(exc, OpenAIError):
        return exc
    if isinstance(exc, ValidationError):
        return from_validation_error(exc)
    if not isinstance(exc, AgentError):
        logger.exception("agent run failed")
        return OpenAIError(500, f"internal error: {type(exc).__name__}", code="internal_error")
    wire = ERRORS[exc.kind]
    message = "the client closed the request" if exc.kind is ErrorKind.CANCELLED else str(exc)
    return OpenAIError(
        wire.status,
        message,
        # A limit names itself (run_timeout, output_limit_exceeded).
        code=getattr(exc, "code", None) or wire.code,
        param=getattr(exc, "param", None),
        type=wire.type,
        # Once agenthost has spent its own retries, the client must not multiply them.
        retry_after=getattr(exc, "retry_after", None),
        retryable=exc.retryable,
    )


def from_validation_error(exc: ValidationError) -> OpenAIError:
    """The most specific invalid field, named as the client wrote it.

    A field that may take several types fails once per type: those failures
    are one message ("must be a valid string or a valid array"); when one
    type got further (a list whose item is wrong), that deeper error wins.
    """
    errors = exc.errors()
    params = [to_param(e["loc"]) for e in errors]
    param = max(params, key=lambda p: len(p or ""))
    reasons = [e["msg"] for e, p in zip(errors, params, strict=True) if p == param]
    rest = [r.removeprefix("Input should be ") for r in reasons[1:]]
    reason = " or ".join(dict.fromkeys([reasons[0], *rest]))
    message = f"{param}: {reason}" if param else reason
    return OpenAIError(400, message, param=param, code="invalid_value")


def to_param(loc: tuple[int | str, ...]) -> str | None:
    """A pydantic error location as OpenAI names params: ``messages[0].content``.

    Pydantic puts the type it tried in a location (``content.str``,
    ``input.list[ResponseInputItem]``); those are not the client's names.
    """
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not _is_type_tag(part):
            text += f".{part}" if text else part
    return text or None


_TYPE_TAGS = {"str", "int", "float", "bool", "none", "dict", "list", "literal"}


def _is_type_tag(part: str) -> bool:
    return "[" in part or part[:1].isupper() or part in _TYPE_TAGS


class OpenAIRoute(APIRoute):
    """Routes of this adapter answer every failure in the OpenAI envelope."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                return from_exception(exc).response()

        return guarded
