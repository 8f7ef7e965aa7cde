"""A2A 1.0 JSON-RPC in front of the SDK's transport-agnostic :class:`RequestHandler`.

The body is read and parsed once (orjson), its ``params`` become the SDK's
protobuf request (``ParseDict``), the handler is called, and its answer
goes out as bytes once (``MessageToDict`` → orjson); a stream's events are
written as SSE by :func:`agenthost.adapters.sse.event_stream`, one event a
handler event, with no task or queue of our own between them.

That covers every well-formed 1.0 request (the ``A2A-Version`` header says
1.x, the envelope is an object with ``jsonrpc: "2.0"``, a known 1.0 method,
a string or integer id and object params that parse). Anything else — a
0.3 method, another version, a batch, an envelope or params the SDK refuses
— is handed, body replayed, to the SDK's own JSON-RPC route (``fallback``),
so that its answer (an error code, a 0.3 conversion) stays the SDK's, byte
for byte. A body that is not JSON is -32700 here, before either.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import orjson
from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import InternalError, JSONRPCError
from a2a.server.request_handlers import RequestHandler
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes import ServerCallContextBuilder
from a2a.server.routes.common import serialize_list_tasks_response
from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import VERSION_HEADER
from a2a.utils.errors import A2AError, TaskNotFoundError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.message import Message as Proto
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.a2a.events import Frames, error_frame, frames, stream_response
from agenthost.adapters.a2a.jsonrpc import DISPATCHER_LOGGER, parse, refuse
from agenthost.adapters.bodies import read_body, replaying
from agenthost.adapters.body_limits import BodyProblem, off_loop
from agenthost.adapters.sse import event_stream

_logger = logging.getLogger(DISPATCHER_LOGGER)
_VERSION_HEADER = VERSION_HEADER.lower().encode()
_V1: Final = re.compile(rb"1(\.[0-9]+)*")
_ENVELOPE: Final = frozenset({"jsonrpc", "method", "params", "id"})
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]

Call = Callable[[RequestHandler, Any, ServerCallContext], Awaitable[Any]]


def _dict(message: Proto) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=False)


async def _answer(message: Proto) -> dict[str, Any]:
    """:func:`_dict`, in the body worker pool for a large message (a task whose history
    holds a large data part: ~1 µs a value)."""
    return await off_loop(message.ByteSize(), _dict, message)


async def _send_message(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    result = await h.on_message_send(r, c)
    key = "task" if isinstance(result, pb.Task) else "message"
    return {
        key: await _answer(result)
    }  # = MessageToDict(SendMessageResponse(...)), without its copy


async def _cancel_task(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    task = await h.on_cancel_task(r, c)
    if task is None:
        raise TaskNotFoundError
    return await _answer(task)


async def _get_task(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    task = await h.on_get_task(r, c)
    if task is None:
        raise TaskNotFoundError
    return await _answer(task)


async def _list_tasks(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    return serialize_list_tasks_response(await h.on_list_tasks(r, c), r.include_artifacts)


async def _create_push(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    return _dict(await h.on_create_task_push_notification_config(r, c))


async def _get_push(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    return _dict(await h.on_get_task_push_notification_config(r, c))


async def _list_push(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    return _dict(await h.on_list_task_push_notification_configs(r, c))


async def _delete_push(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    await h.on_delete_task_push_notification_config(r, c)


async def _extended_card(h: RequestHandler, r: Any, c: ServerCallContext) -> Any:
    return _dict(await h.on_get_extended_agent_card(r, c))


UNARY: Final[Mapping[str, tuple[type[Proto], Call]]] = {
    "SendMessage": (pb.SendMessageRequest, _send_message),
    "GetTask": (pb.GetTaskRequest, _get_task),
    "ListTasks": (pb.ListTasksRequest, _list_tasks),
    "CancelTask": (pb.CancelTaskRequest, _cancel_task),
    "CreateTaskPushNotificationConfig": (pb.TaskPushNotificationConfig, _create_push),
    "GetTaskPushNotificationConfig": (pb.GetTaskPushNotificationConfigRequest, _get_push),
    "ListTaskPushNotificationConfigs": (pb.ListTaskPushNotificationConfigsRequest, _list_push),
    "DeleteTaskPushNotificationConfig": (
        pb.DeleteTaskPushNotificationConfigRequest,
        _delete_push,
    ),
    "GetExtendedAgentCard": (pb.GetExtendedAgentCardRequest, _extended_card),
}
"""The 1.0 methods answered with one JSON body: request type, handler call."""

STREAMING: Final[Mapping[str, type[Proto]]] = {
    "SendStreamingMessage": pb.SendMessageRequest,
    "SubscribeToTask": pb.SubscribeToTaskRequest,
}
"""The 1.0 methods answered with an SSE stream."""


def is_v1(scope: Scope) -> bool:
    """Whether ``A2A-Version`` plainly says 1.x (no header means 0.3, as the SDK reads it).

    Anything less plain (``v1.0``, ``1.0rc1``) goes to the SDK's route, whose
    version check decides.
    """
    for name, value in scope["headers"]:
        if name == _VERSION_HEADER:
            return _V1.fullmatch(value) is not None
    return False


def _request_id(envelope: dict[str, Any]) -> tuple[bool, str | int | None]:
    request_id = envelope.get("id")
    ok = request_id is None or (isinstance(request_id, str | int) and request_id is not True)
    return ok and request_id is not False, request_id


def _parse_request(body: bytes, v1: bool) -> tuple[str, str | int | None, Proto] | None:
    """(method, id, request) of a well-formed 1.0 request, else None (the SDK answers it).

    Blocking: large bodies come here in the worker pool.
    """
    envelope = parse(body)
    if not isinstance(envelope, dict) or not v1:
        return None
    method = envelope.get("method")
    if envelope.get("jsonrpc") != "2.0" or not envelope.keys() <= _ENVELOPE:
        return None
    if not isinstance(method, str):
        return None
    if method in UNARY:
        model = UNARY[method][0]
    elif method in STREAMING:
        model = STREAMING[method]
    else:
        return None
    ok, request_id = _request_id(envelope)
    params = envelope.get("params", {})
    if not ok or not isinstance(params, dict):
        return None
    try:
        # Unknown fields are ignored for forward compatibility, as the SDK does.
        request = ParseDict(params, model(), ignore_unknown_fields=True)
    except Exception:  # the SDK answers -32602 with its own wording
        return None
    return method, request_id, request


class JSONRPCFront:
    """One agent's JSON-RPC endpoint: parse once, call the handler, write once."""

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
        try:
            parsed = await off_loop(len(body), _parse_request, body, is_v1(scope))
        except BodyProblem as problem:
            await refuse(send, problem)
            _logger.info("refused a JSON-RPC body: %s", problem.message)
            return
        if parsed is None:
            await self.fallback(scope, replaying(body, receive), send)
            return
        method, request_id, request = parsed
        context = self.builder.build(Request(scope))
        context.tenant = getattr(request, "tenant", "")
        context.state["method"] = method
        context.state["request_id"] = request_id
        if method in STREAMING:
            await self._stream(method, request_id, request, context, scope, receive, send)
            return
        try:
            result = await UNARY[method][1](self.handler, request, context)
            answer = {"result": result, "id": request_id, "jsonrpc": "2.0"}
        except A2AError as exc:
            answer = build_error_response(request_id, exc)
        except Exception as exc:  # the SDK's dispatcher answers these -32603 too
            answer = _internal_error(request_id, exc)
        await _send_json(send, answer)

    async def _stream(
        self,
        method: str,
        request_id: str | int | None,
        request: Any,
        context: ServerCallContext,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        if method == "SendStreamingMessage":
            events = self.handler.on_message_send_stream(request, context)
        else:
            events = self.handler.on_subscribe_to_task(request, context)
        try:  # the first event now, so that an up-front error is a JSON answer
            first = await anext(events)
        except StopAsyncIteration:
            first = None
        except A2AError as exc:
            await _send_json(send, _logged_error(request_id, exc))
            return
        except Exception as exc:
            await _send_json(send, _internal_error(request_id, exc))
            return
        sse = frames(first, events, _jsonrpc_events(request_id))
        await event_stream(sse, {})(scope, receive, send)


def _jsonrpc_events(request_id: str | int | None) -> Frames:
    """A stream's SSE frames inside JSON-RPC responses with the request's id."""

    def event(event: Proto) -> bytes:
        answer = {"result": stream_response(event), "id": request_id, "jsonrpc": "2.0"}
        return b"data: " + orjson.dumps(answer) + b"\r\n\r\n"

    def error(exc: Exception) -> bytes:
        if isinstance(exc, A2AError):
            answer = build_error_response(request_id, exc)
        else:
            _logger.exception("Unhandled error during JSON-RPC SSE stream")
            answer = build_error_response(request_id, InternalError(message=str(exc)))
        return error_frame(answer)

    return Frames(event, error)


def _logged_error(request_id: str | int | None, error: A2AError | JSONRPCError) -> dict[str, Any]:
    """The error answer, logged as the SDK's dispatcher logs one."""
    answer = build_error_response(request_id, error)
    body = answer["error"]
    level = logging.ERROR if body.get("code") == -32603 else logging.WARNING
    data = body.get("data")
    _logger.log(
        level,
        "Request Error (ID: %s): Code=%s, Message='%s'%s",
        request_id,
        body.get("code"),
        body.get("message"),
        f", Data={data}" if data else "",
    )
    return answer


def _internal_error(request_id: str | int | None, exc: Exception) -> dict[str, Any]:
    _logger.exception("Unhandled exception")
    return _logged_error(request_id, InternalError(message=str(exc)))


async def _send_json(send: Send, answer: dict[str, Any]) -> None:
    payload = orjson.dumps(answer)
    headers = [*_JSON_HEADERS, (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
