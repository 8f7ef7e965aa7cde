"""Errors in the OpenAI envelope: ``{"error": {message, type, param, code}}``.

One place maps every failure of this adapter to a status and that body.
Failures that retrying cannot fix carry ``x-should-retry: false`` so the
OpenAI SDK does not run a failing agent three times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from agenthost.agents import AgentError, ModelBusy, ModelError, UserError
from agenthost.agents.errors import ClientGone, RunInterrupted, RunLimitExceeded

logger = logging.getLogger("agenthost.openai")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
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


def from_exception(exc: Exception) -> OpenAIError:
    """Any failure of a run → the error the client gets."""
    if isinstance(exc, OpenAIError):
        return exc
    if isinstance(exc, ValidationError):
        return from_validation_error(exc)
    if isinstance(exc, UserError):
        return OpenAIError(400, str(exc), param=exc.param, code="invalid_request")
    if isinstance(exc, ModelBusy):
        # Once agenthost has spent its own retries, the client must not multiply them.
        return OpenAIError(
            429,
            str(exc),
            code="rate_limit_exceeded",
            retry_after=exc.retry_after,
            retryable=not exc.retried,
        )
    if isinstance(exc, ModelError):
        return OpenAIError(502, str(exc), code="upstream_error", type="api_error")
    if isinstance(exc, ClientGone):
        # Nobody reads it; 499 (nginx's "client closed request") marks it in the access log.
        return OpenAIError(499, "the client closed the request", code="client_closed_request")
    if isinstance(exc, RunLimitExceeded):
        status = 504 if exc.code == "run_timeout" else 400
        return OpenAIError(status, str(exc), code=exc.code)
    if isinstance(exc, RunInterrupted):
        # Retryable: another replica (or this one, restarted) can take it.
        return OpenAIError(503, str(exc), code="server_shutting_down", retryable=True)
    if isinstance(exc, AgentError):
        return OpenAIError(500, str(exc), code="agent_error")
    logger.exception("agent run failed")
    return OpenAIError(500, f"internal error: {type(exc).__name__}", code="internal_error")


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
