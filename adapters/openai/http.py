"""Request parsing and response helpers shared by the endpoints of this adapter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.body_limits import BodyProblem, current_limits, load_json, off_loop, refusal
from agenthost.adapters.openai.errors import OpenAIError, from_validation_error
from agenthost.adapters.sse import Events, event_stream
from agenthost.agents import Agent

Body = TypeVar("Body", bound=BaseModel)

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def read_body(request: Request, model: type[Body]) -> Body:
    """Parse and validate a JSON body; malformed JSON and bad fields are 400s.

    The body must be declared JSON (or not declared: some clients omit the
    header). A form or text body is a 415 before anything runs: browsers
    send those cross-site without a CORS preflight. A body past the JSON
    limits is a 400 naming the limit; a large one is parsed and validated
    off the event loop (:mod:`agenthost.adapters.body_limits`).
    """
    check_json(request)
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise OpenAIError(400, "the request body was cut short", code="incomplete_body") from None
    return await parse_body(raw, model)


async def parse_body(raw: bytes, model: type[Body]) -> Body:
    """``raw`` JSON validated as ``model``, within the JSON limits (off the loop when
    large); malformed JSON, a limit passed and bad fields are 400s."""
    try:
        return await off_loop(len(raw), _validated, raw, model)
    except BodyProblem as problem:
        code = "invalid_json" if problem.limit is None else "body_too_complex"
        raise OpenAIError(400, refusal(problem), code=code) from None
    except ValidationError as exc:
        raise from_validation_error(exc) from None


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


def check_json(request: Request) -> None:
    declared = request.headers.get("content-type")
    if declared is None:
        return
    media = declared.split(";", 1)[0].strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        raise OpenAIError(
            415,
            f"the request body must be application/json, not {media or 'empty'!r}",
            code="unsupported_media_type",
        )


def find_agent(agents: Mapping[str, Agent], model: str) -> Agent:
    agent = agents.get(model)
    if agent is None:
        raise OpenAIError(
            404,
            f"The model '{model}' does not exist; GET /v1/models lists the agents",
            param="model",
            code="model_not_found",
        )
    return agent


def json_response(content: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(content), status, media_type="application/json")


def sse_event(data: Any, *, event: str | None = None) -> bytes:
    """One server-sent event; ``event`` adds the ``event:`` line the Responses API has."""
    line = b"data: " + orjson.dumps(data) + b"\n\n"
    return b"event: " + event.encode() + b"\n" + line if event else line


def sse_response(events: Events) -> Response:
    """The stream, with a keep-alive comment during silences (:mod:`agenthost.adapters.sse`)."""
    return event_stream(events, SSE_HEADERS)
