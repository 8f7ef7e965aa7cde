"""Errors in ACP's shape: ``{"code", "message", "data"}`` with an HTTP status.

acp-sdk's client reads every failed answer as that body (it raises
``ACPError`` with it), so every failure of this adapter goes through here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final, TypeVar

import orjson
from acp_sdk.models import Error
from acp_sdk.models.common import AnyModel
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.body_limits import BodyProblem, current_limits, load_json, off_loop, refusal
from agenthost.agents import AgentError, ErrorKind, kind_of
from agenthost.agents.errors import details_of, message_of

logger = logging.getLogger("agenthost.acp")

Body = TypeVar("Body", bound=BaseModel)

ERRORS: Final[Mapping[ErrorKind, tuple[int, str]]] = {
    ErrorKind.BUSY: (429, "server_error"),
    ErrorKind.TIMEOUT: (504, "server_error"),
    ErrorKind.REFUSED: (403, "invalid_input"),
    ErrorKind.LIMIT_EXCEEDED: (400, "invalid_input"),
    ErrorKind.BAD_INPUT: (422, "invalid_input"),
    ErrorKind.NOT_FOUND: (404, "not_found"),
    ErrorKind.UPSTREAM: (502, "server_error"),
    # Nobody reads it; 499 (nginx's "client closed request") marks it in the log.
    ErrorKind.CANCELLED: (499, "server_error"),
    ErrorKind.INTERRUPTED: (503, "server_error"),
    ErrorKind.INTERNAL: (500, "server_error"),
    ErrorKind.UNAVAILABLE: (503, "server_error"),
}
"""Each kind of failure as an HTTP status and one of the codes acp-sdk knows; the
kind itself, and whether to retry, go in the error's ``data``."""


def to_error(exc: BaseException) -> tuple[int, Error]:
    """A failure's status and ACP error (a bug's message names only its type)."""
    status, code = ERRORS[kind_of(exc)]
    return status, Error(code=code, message=message_of(exc), data=AnyModel(**details_of(exc)))


# acp-sdk's own status → code mapping (the codes it knows: not_found,
# invalid_input, server_error); other statuses keep the app's code.
_CODES = {400: "invalid_input", 404: "not_found", 409: "invalid_input", 422: "invalid_input"}


class ACPProblem(Exception):
    """A failure to answer with an ACP error body."""

    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or _CODES.get(status, "server_error")

    def response(self) -> Response:
        body = {"code": self.code, "message": self.message, "data": None}
        return Response(orjson.dumps(body), self.status, media_type="application/json")


def not_found(what: str, name: object) -> ACPProblem:
    return ACPProblem(404, f"{what} {name} not found")


async def read_body(request: Request, model: type[Body]) -> Body:
    """Parse a JSON body whatever its Content-Type (acp-sdk sends none).

    A body past the JSON limits is a 400 naming the limit; a large one is
    parsed and validated off the event loop (:mod:`agenthost.adapters.body_limits`).
    """
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise ACPProblem(400, "the request body was cut short") from None
    try:
        return await off_loop(len(raw), _validated, raw, model)
    except BodyProblem as problem:
        raise ACPProblem(400, refusal(problem)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ACPProblem(422, f"{where}: {first['msg']}" if where else first["msg"]) from None


def _validated(raw: bytes, model: type[Body]) -> Body:
    """``raw`` within the JSON limits, validated. Blocking.

    A small body is validated from its JSON (pydantic's JSON mode, whose
    strict rules the models are written for); a large one, here in the
    worker pool, from the parsed value: pydantic holds the GIL through a
    JSON validation (~0.1 s for 100,000 values) but not through Python
    objects' (the loop gets its turn).
    """
    value = load_json(raw)
    if len(raw) < current_limits().offload_bytes:
        return model.model_validate_json(raw)
    return model.model_validate(value)


class ACPRoute(APIRoute):
    """Routes of this adapter answer every failure with an ACP error body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except ACPProblem as problem:
                return problem.response()
            except AgentError as exc:
                status, error = to_error(exc)
                return Response(error.model_dump_json(), status, media_type="application/json")
            except Exception:
                logger.exception("ACP request failed")
                return ACPProblem(500, "internal error").response()

        return guarded
