"""Reading a request and writing answers: JSON bodies, agents as models, SSE events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.anthropic.errors import AnthropicError, from_validation_error, invalid
from agenthost.adapters.body_limits import BodyProblem, current_limits, load_json, off_loop, refusal
from agenthost.adapters.sse import Events, event_stream
from agenthost.agents import Agent

Body = TypeVar("Body", bound=BaseModel)

SSE_HEADERS = {"Cache-Control": "no-cache"}


async def read_body(request: Request, model: type[Body]) -> Body:
    """A JSON body, validated; malformed JSON, a body past the JSON limits
    (:mod:`agenthost.adapters.body_limits`) and bad fields are 400s."""
    declared = request.headers.get("content-type")
    media = (declared or "application/json").split(";", 1)[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise AnthropicError(415, f"the request body must be application/json, not {media!r}")
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise invalid("the request body was cut short") from None
    try:
        return await off_loop(len(raw), _validated, raw, model)
    except BodyProblem as problem:
        raise invalid(refusal(problem)) from None
    except ValidationError as exc:
        raise from_validation_error(exc) from None


def _validated(raw: bytes, model: type[Body]) -> Body:
    """``raw`` within the JSON limits, validated (in the worker pool when large). Blocking."""
    value = load_json(raw)
    if not isinstance(value, dict):
        raise invalid("the request body must be a JSON object")
    if len(raw) < current_limits().offload_bytes:
        return model.model_validate_json(raw)
    return model.model_validate(value)


def find_agent(agents: Mapping[str, Agent], model: str) -> Agent:
    agent = agents.get(model)
    if agent is None:
        raise AnthropicError(404, f"model: {model!r} is not an agent of this server")
    return agent


def json_response(content: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(content), status, media_type="application/json")


def sse_event(data: dict[str, Any]) -> bytes:
    """One event of a Messages stream: its ``event:`` line is the data's ``type``."""
    kind: str = data["type"]
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def sse_response(events: Events) -> Response:
    """The stream, with a keep-alive comment during silences (:mod:`agenthost.adapters.sse`)."""
    return event_stream(events, SSE_HEADERS)
