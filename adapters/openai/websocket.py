"""The Responses API's WebSocket mode: ``/v1/responses`` upgraded to a WebSocket.

The openai SDKs' ``client.responses.connect()`` opens it with the client's
headers (the app's key and token check, origin check and principal apply
to the upgrade as to any request: a refused upgrade is the HTTP error, never
accepted). Each ``response.create`` text message carries the fields of
``POST /v1/responses`` and runs exactly what that request runs with
``stream: true`` (:func:`adapters.openai.responses.start` and
:func:`~adapters.openai.responses.stream_events`); its events come back one
JSON object per text message, the SSE stream's progress comments left out.
Responses run one after another in the order asked (a queue of
:data:`QUEUED` waiting); ``previous_response_id`` chains them through the
stored responses, as over HTTP.

A message that cannot run (not JSON, past a limit, an unknown ``type``,
invalid fields, an unknown model, ``background``) gets an ``error`` event in
the SDK's ``ResponseWsError`` shape (``error`` with the envelope's fields,
``status`` the HTTP status it would have had) and the connection stays open.
A client that closes the socket mid-response cancels its run, as an HTTP
client that disconnects does.

Each ``response.create`` is admitted as an HTTP request would be
(:mod:`.websocket_checks`): its principal's quotas count it, and the
upgrade's key or token must still hold (an expired token closes the
connection with an ``error`` event and close code 1008), and its bytes count
against the same body-bytes-in-flight budgets as an HTTP body, from its
receipt until it is parsed (a refusal is an ``error`` event, 429 or 503).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import orjson
from pydantic import BaseModel, ConfigDict
from starlette.websockets import WebSocket, WebSocketDisconnect

from agenthost.adapters.openai.errors import OpenAIError, from_exception
from agenthost.adapters.openai.http import parse_body
from agenthost.adapters.openai.responses import start, stream_events
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.turns import Stores
from agenthost.adapters.openai.websocket_checks import (
    POLICY_VIOLATION,
    CredentialExpired,
    MessageChecks,
)
from agenthost.agents import Agent

QUEUED = 4
"""``response.create`` messages a connection may have waiting behind the running one;
past them the connection stops reading (the client's sends wait)."""

CREATE = "response.create"


class ClientEvent(BaseModel):
    """What every client message has: its ``type`` (the rest is the event's)."""

    model_config = ConfigDict(extra="allow", strict=True)

    type: str


def ws_event(data: Any, *, event: str | None = None) -> bytes:
    """An event as its WebSocket message: the JSON object alone."""
    return orjson.dumps(data)


def error_event(error: OpenAIError) -> str:
    """The ``error`` event (the SDK's ``ResponseWsError``) for a message that did not run."""
    return orjson.dumps({"type": "error", "status": error.status, **error.body()}).decode()


async def serve_responses(
    websocket: WebSocket,
    agents: Mapping[str, Agent],
    stores: Stores,
    checks: MessageChecks,
    *,
    max_bytes: int,
) -> None:
    """Accept the upgrade and answer its ``response.create`` messages until it closes;
    ``checks`` admits each (:mod:`.websocket_checks`), ``max_bytes`` bounds a message
    as the app bounds a request body."""
    await websocket.accept()
    try:
        await _serve(websocket, agents, stores, checks, max_bytes)
    finally:
        checks.body_bytes.release_all()  # messages still queued when it closed


async def _serve(
    websocket: WebSocket,
    agents: Mapping[str, Agent],
    stores: Stores,
    checks: MessageChecks,
    max_bytes: int,
) -> None:
    send, receive = anyio.create_memory_object_stream[bytes](QUEUED)
    async with anyio.create_task_group() as tasks:

        async def respond() -> None:
            async with receive:
                try:
                    async for raw in receive:
                        await _answer(websocket, raw, agents, stores, checks)
                except (WebSocketDisconnect, OSError, CredentialExpired):
                    # The socket closed under a send, or was closed: the connection is over.
                    tasks.cancel_scope.cancel()

        tasks.start_soon(respond)
        async with send:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                raw = text.encode() if text is not None else message.get("bytes") or b""
                if len(raw) > max_bytes:
                    too_large = f"message larger than {max_bytes} bytes"
                    problem = OpenAIError(413, too_large, code="request_too_large")
                    await websocket.send_text(error_event(problem))
                    continue
                if (busy := checks.body_bytes.hold(len(raw))) is not None:
                    await websocket.send_text(error_event(busy))
                    continue
                await send.send(raw)  # its bytes are given back once it is parsed
        # The client is gone: a response still running is cancelled with its run.
        tasks.cancel_scope.cancel()


async def _answer(
    websocket: WebSocket,
    raw: bytes,
    agents: Mapping[str, Agent],
    stores: Stores,
    checks: MessageChecks,
) -> None:
    """Run one message's response, its events sent as they come; an ``error`` event
    when it cannot run; the connection closed (:class:`CredentialExpired` raised) when
    its credential no longer holds."""
    try:
        await checks.admit()
        event = await parse_body(raw, ClientEvent)
        if event.type != CREATE:
            raise OpenAIError(
                400,
                f"agenthost serves only {CREATE!r} events over WebSocket, not {event.type!r}",
                param="type",
                code="unsupported_event_type",
            )
        body = await parse_body(raw, ResponseRequest)
        if body.background:
            raise OpenAIError(
                400, "background responses are not served over WebSocket", param="background"
            )
        body.stream = True  # implicit over WebSocket
        agent, prepared = await start(body, agents, stores, checks.principal)
    except CredentialExpired as expired:
        await websocket.send_text(error_event(expired.error))
        await websocket.close(POLICY_VIOLATION, "credential expired")
        raise
    except Exception as exc:
        await websocket.send_text(error_event(from_exception(exc)))
        return
    finally:
        checks.body_bytes.release(len(raw))  # parsed (or refused): as an HTTP body's count
    async for chunk in stream_events(agent, prepared, ws_event):
        if chunk and not chunk.startswith(b":"):  # a progress comment: SSE only
            await websocket.send_text(chunk.decode())
