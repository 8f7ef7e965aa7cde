"""Errors in Anthropic's shape: ``{"type": "error", "error": {"type": …, "message": …}}``.

One place maps every failure of this adapter (and the app's own refusals,
through :meth:`AnthropicAdapter.error_response`) to a status and that body.
The error ``type`` follows the status as Anthropic's API pairs them
(:data:`TYPES`); a run's failure takes its status from its kind
(:data:`ERRORS`). Failures that retrying cannot fix carry
``x-should-retry: false``, which the anthropic SDKs honour, so a failing
agent is not run three times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final

import orjson
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from agenthost.agents import AgentError, ErrorKind

logger = logging.getLogger("agenthost.anthropic")

TYPES: Final[Mapping[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""Anthropic's error type of each status; other 4xx are ``invalid_request_error``,
other 5xx ``api_error``."""

ERRORS: Final[Mapping[ErrorKind, int]] = {
    ErrorKind.BUSY: 529,  # the upstream is busy: Anthropic's "overloaded", which SDKs retry
    ErrorKind.TIMEOUT: 504,
    ErrorKind.REFUSED: 403,
    ErrorKind.LIMIT_EXCEEDED: 400,
    ErrorKind.BAD_INPUT: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.UPSTREAM: 502,
    # Nobody reads it; 499 (nginx's "client closed request") marks it in the access log.
    ErrorKind.CANCELLED: 499,
    # Retryable: another replica (or this one, restarted) can take it.
    ErrorKind.INTERRUPTED: 503,
    ErrorKind.INTERNAL: 500,
    ErrorKind.UNAVAILABLE: 503,
}
"""The status of each kind of run failure."""


def error_type(status: int) -> str:
    return TYPES.get(status) or ("api_error" if status >= 500 else "invalid_request_error")


class AnthropicError(Exception):
    """A failure to answer in Anthropic's error shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        retry_after: float | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = error_type(status)
        self.retry_after = retry_after
        self.retryable = retryable

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.type, "message": self.message}}

    def response(self) -> Response:
        final = (self.status >= 500 or self.status == 429) and not self.retryable
        headers = {"x-should-retry": "false"} if final else {}
        if self.retry_after is not None:
            headers["retry-after"] = str(round(self.retry_after))
        return Response(orjson.dumps(self.body()), self.status, headers, "application/json")


def invalid(message: str) -> AnthropicError:
    """A 400 ``invalid_request_error``."""
    return AnthropicError(400, message)


def from_exception(exc: Exception) -> AnthropicError:
    """Any failure of a request or a run → the error the client gets."""
    if isinstance(exc, AnthropicError):
        return exc
    if isinstance(exc, ValidationError):
        return from_validation_error(exc)
    if not isinstance(exc, AgentError):
        logger.exception("agent run failed")
        return AnthropicError(500, f"internal error: {type(exc).__name__}")
    message = "the client closed the request" if exc.kind is ErrorKind.CANCELLED else str(exc)
    param = getattr(exc, "param", None)
    if param and exc.kind in (ErrorKind.BAD_INPUT, ErrorKind.LIMIT_EXCEEDED):
        message = f"{param}: {message}"
    return AnthropicError(
        ERRORS[exc.kind],
        message,
        retry_after=getattr(exc, "retry_after", None),
        retryable=exc.retryable,
    )


def from_validation_error(exc: ValidationError) -> AnthropicError:
    """The first invalid field, named as Anthropic names them (``messages.0.content``)."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"] if not _is_type_tag(p))
    return invalid(f"{where}: {error['msg']}" if where else error["msg"])


def _is_type_tag(part: int | str) -> bool:
    # Pydantic puts the type it tried in a location (``content.str``, ``list[…]``).
    return isinstance(part, str) and (
        "[" in part or part[:1].isupper() or part in ("str", "int", "float", "bool", "dict", "list")
    )


class AnthropicRoute(APIRoute):
    """Routes of this adapter answer every failure in Anthropic's error shape."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                return from_exception(exc).response()

        return guarded
