"""Request parsing and response helpers shared by the endpoints of this adapter."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse

from adapters.openai.errors import OpenAIError, from_validation_error
from agents import Agent, RunUpdate

Body = TypeVar("Body", bound=BaseModel)

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def read_body(request: Request, model: type[Body]) -> Body:
    """Parse and validate a JSON body; malformed JSON and bad fields are 400s."""
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise OpenAIError(400, "the request body was cut short", code="incomplete_body") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise OpenAIError(
                400, "the request body is not valid JSON", code="invalid_json"
            ) from None
        raise from_validation_error(exc) from None


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


def sse_event(data: Any) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def sse_response(events: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers=SSE_HEADERS)


async def started(updates: AsyncGenerator[RunUpdate, None]) -> AsyncGenerator[RunUpdate, None]:
    """Wait for a run's first update, then give back a generator of all of them.

    A run that fails at once (bad upstream key, unreachable server) then
    gets a real error status instead of a 200 stream holding an error event.
    """
    try:
        first = await anext(updates)
    except BaseException:
        await updates.aclose()
        raise

    async def replay() -> AsyncGenerator[RunUpdate, None]:
        try:
            yield first
            async for update in updates:
                yield update
        finally:
            await updates.aclose()

    return replay()
