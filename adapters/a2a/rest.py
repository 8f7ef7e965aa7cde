"""A2A 1.0 HTTP+JSON ``message:send`` and ``message:stream`` in front of the SDK's handler.

The two routes every exchange starts with, parsed once: the body (orjson)
becomes the SDK's ``SendMessageRequest`` (``ParseDict``), the handler is
called, the answer goes out as bytes once, ``application/a2a+json``; a
stream's events are written by :func:`agenthost.adapters.sse.event_stream`.
Errors are the SDK's problem bodies (``build_rest_error_payload``) with the
spec's statuses (:func:`~agenthost.adapters.a2a.statuses.spec_status`), as
:class:`~agenthost.adapters.a2a.statuses.SpecErrors` makes the SDK's own.

What the front does not take — another ``A2A-Version``, a body that is not
UTF-8 JSON of a ``SendMessageRequest`` — goes, replayed, to the agent's app
(``fallback``: the SDK's routes), which answers it as before. The other
HTTP+JSON routes (task reads, push configs: no body to parse) stay the SDK's.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import orjson
from a2a.server.request_handlers import RequestHandler
from a2a.server.routes import ServerCallContextBuilder
from a2a.types import a2a_pb2 as pb
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import A2AError, InternalError, InvalidRequestError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.message import Message as Proto
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.a2a.events import Frames, error_frame, frames, stream_response
from agenthost.adapters.a2a.rpc import is_v1
from agenthost.adapters.a2a.statuses import A2A_JSON, spec_status
from agenthost.adapters.bodies import read_body, replaying
from agenthost.adapters.body_limits import BodyProblem, load_json_for_sdk, off_loop, refusal
from agenthost.adapters.sse import event_stream

_errors = logging.getLogger("a2a.utils.error_handlers")  # where the SDK logs these
_streams = logging.getLogger("a2a.server.routes.rest_dispatcher")
METHODS: Final = ("/message:send", "/message:stream")
"""The routes (relative to the agent's URL) this front answers."""


def _problem(exc: Exception) -> tuple[int, dict[str, Any]]:
    """The status and body the SDK's route (then :class:`SpecErrors`) answers ``exc`` with."""
    if isinstance(exc, A2AError):
        level = logging.ERROR if isinstance(exc, InternalError) else logging.WARNING
        data = f", Data={exc.data}" if exc.data else ""
        code, message = getattr(exc, "code", "N/A"), getattr(exc, "message", str(exc))
        _errors.log(level, "Request error: Code=%s, Message='%s'%s", code, message, data)
    else:
        _errors.exception("Unknown error occurred")
    payload = build_rest_error_payload(exc)
    status = payload["error"]["code"]
    spec = spec_status(payload, status)
    if spec != status:
        payload["error"]["code"] = spec
    return spec, payload


def _rest_event(event: Proto) -> bytes:
    return b"data: " + orjson.dumps(stream_response(event)) + b"\r\n\r\n"


def _rest_error(exc: Exception) -> bytes:
    _streams.exception("Error during REST SSE stream")
    return error_frame(build_rest_error_payload(exc))


_FRAMES: Final = Frames(_rest_event, _rest_error)


class HTTPJSONFront:
    """An agent's ``message:send``/``message:stream``: parse once, call the handler, write once."""

    def __init__(
        self, handler: RequestHandler, builder: ServerCallContextBuilder, fallback: ASGIApp
    ) -> None:
        self.handler = handler
        self.builder = builder
        self.fallback = fallback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if body is None:
            return  # the client is gone: nobody to answer
        # Another version (0.3) goes to the SDK's route, whose conversion is on the
        # loop: only the bounds are checked here.
        parse = _parse if is_v1(scope) else load_json_for_sdk
        try:
            request = await off_loop(len(body), parse, body)
        except BodyProblem as problem:
            error = InvalidRequestError(refusal(problem))
            await _send_json(send, 400, build_rest_error_payload(error))
            return
        if not isinstance(request, pb.SendMessageRequest):
            await self.fallback(scope, replaying(body, receive), send)
            return
        context = self.builder.build(Request(scope))
        if scope["path"].endswith(":stream"):
            await self._stream(request, context, scope, receive, send)
            return
        try:
            result = await self.handler.on_message_send(request, context)
        except Exception as exc:
            await _send_json(send, *_problem(exc))
            return
        key = "task" if isinstance(result, pb.Task) else "message"
        converted = await off_loop(result.ByteSize(), _dict, result)  # large: ~1 µs a value
        answer = {key: converted}
        await _send_json(send, 200, answer)

    async def _stream(
        self,
        request: pb.SendMessageRequest,
        context: Any,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        events = self.handler.on_message_send_stream(request, context)
        try:  # the first event now, so that an up-front error is a JSON answer
            first = await anext(events)
        except StopAsyncIteration:
            first = None
        except Exception as exc:
            await _send_json(send, *_problem(exc))
            return
        await event_stream(frames(first, events, _FRAMES), {})(scope, receive, send)


def _parse(body: bytes) -> pb.SendMessageRequest | None:
    """The body as a ``SendMessageRequest``, or None where the SDK's route must answer.

    :class:`BodyProblem` for a body past a limit, or JSON the SDK would read
    but not answer (NaN, a lone surrogate: a 500 further on). Blocking: large
    bodies come here in the worker pool.
    """
    value = load_json_for_sdk(body)  # None if not JSON: the SDK's 400, in its own words
    if not isinstance(value, dict):
        return None
    try:
        # Unknown fields are ignored for forward compatibility, as the SDK does.
        return ParseDict(value, pb.SendMessageRequest(), ignore_unknown_fields=True)
    except Exception:  # the SDK's 400, in its own words
        return None


def _dict(message: Proto) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=False)


async def _send_json(send: Send, status: int, answer: dict[str, Any]) -> None:
    payload = orjson.dumps(answer)
    headers = [
        (b"content-type", A2A_JSON.encode()),
        (b"content-length", b"%d" % len(payload)),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
