"""Errors in ACP's shape: ``{"code", "message", "data"}`` with an HTTP status.

acp-sdk's client reads every failed answer as that body (it raises
``ACPError`` with it), so every failure of this adapter goes through here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import orjson
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.agents import UserError
from agenthost.agents.errors import ClientGone

logger = logging.getLogger("agenthost.acp")

Body = TypeVar("Body", bound=BaseModel)

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
    """Parse a JSON body whatever its Content-Type (acp-sdk sends none)."""
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise ACPProblem(400, "the request body was cut short") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise ACPProblem(400, "the request body is not valid JSON") from None
        where = ".".join(str(part) for part in first["loc"])
        raise ACPProblem(422, f"{where}: {first['msg']}" if where else first["msg"]) from None


class ACPRoute(APIRoute):
    """Routes of this adapter answer every failure with an ACP error body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except ACPProblem as problem:
                return problem.response()
            except UserError as exc:
                return ACPProblem(422, str(exc)).response()
            except ClientGone:
                # Nobody reads it; 499 (nginx's "client closed request") marks it in the log.
                return ACPProblem(499, "the client closed the request").response()
            except Exception:
                logger.exception("ACP request failed")
                return ACPProblem(500, "internal error").response()

        return guarded
