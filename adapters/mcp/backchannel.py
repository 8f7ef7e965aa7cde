"""Server → client requests inside a call (``sampling/createMessage``, ``elicitation/create``).

With a session (stateful HTTP, stdio) the SDK carries them: it writes the
request on the call's stream and routes the client's answer back by the
session. In stateless mode (the default) a handshake-era call has no
session: the SDK refuses to send requests at all. The spec still allows
a request on the call's own SSE stream, and a client answers it with a POST
of its own: here is that back channel.

- The endpoint wraps each stateless POST's ASGI ``send`` in a
  :class:`CallStream` (reached by the call through a context variable): a
  request is written as one more SSE event of that response, between the
  SDK's own events.
- Its id is minted here, unguessable (``srv-`` and 128 random bits), and
  the call waits in :class:`Replies` under ``(principal, id)``.
- Whether the client can answer (its capabilities) is what the caller's
  last ``initialize`` declared (:class:`Introductions`: a stateless server
  sees no session, so per principal, on this replica, for the session idle
  timeout); without one, nothing is asked (the question is the tool result).
  Without API keys every client is the same principal: the last one to
  initialize decides; a client asked what it cannot answer answers with an
  error, and the call falls back as if it had not been asked.
- The client's answer is a POST holding a JSON-RPC response and no session
  id; the endpoint hands it to the waiting call of the same principal (202)
  before the SDK sees it. An id no call of that principal waits for is 404
  with a JSON-RPC error, and nothing else is affected.

Across replicas (a shared store, Redis): an id names the replica that
minted it; an answer that reaches another replica is relayed to it over the
store's pub/sub (:class:`Relay`, answered 202: the replica that waits
checks the principal), and each ``initialize`` is told to every replica.
An id of this replica that no call waits for is 404.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import anyio
import mcp_types as types
import orjson
from cachetools import TTLCache
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel
from starlette.types import Message, Send

from agenthost.adapters.cancels import SharedMemory

logger = logging.getLogger("agenthost.mcp")

ResultT = TypeVar("ResultT", bound=BaseModel)

ID_PREFIX = "srv-"
RELAY_TOPIC = "mcp:asks"


class Channel(Protocol):
    """A way to send one request to the calling client and get its result."""

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        """The client's result; an ``MCPError`` when it answered with an error."""
        ...


@dataclass(slots=True)
class _Slot:
    done: anyio.Event = field(default_factory=anyio.Event)
    message: dict[str, Any] | None = None


class Replies:
    """The server requests waiting for a client's answer, by principal and id."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], _Slot] = {}
        self.replica = secrets.token_hex(4)

    @contextmanager
    def expect(self, principal: str) -> Iterator[tuple[str, _Slot]]:
        """A fresh request id and the slot its answer lands in, while the body runs."""
        request_id = f"{ID_PREFIX}{self.replica}-{secrets.token_urlsafe(16)}"
        key = (principal, request_id)
        slot = self._waiting[key] = _Slot()
        try:
            yield request_id, slot
        finally:
            del self._waiting[key]

    def deliver(self, principal: str, message: dict[str, Any]) -> bool:
        """Hand a client's response to the call waiting for it; False: none is."""
        request_id = message.get("id")
        slot = self._waiting.get((principal, request_id)) if isinstance(request_id, str) else None
        if slot is None or slot.done.is_set():
            return False
        slot.message = message
        slot.done.set()
        return True

    def elsewhere(self, request_id: Any) -> bool:
        """Whether ``request_id`` is one another replica minted."""
        if not isinstance(request_id, str) or not request_id.startswith(ID_PREFIX):
            return False
        replica, _, rest = request_id.removeprefix(ID_PREFIX).partition("-")
        return bool(rest) and replica != self.replica


def is_response(message: Any) -> bool:
    """A JSON-RPC response (a result or an error for an id), not a request."""
    return (
        isinstance(message, dict)
        and "method" not in message
        and "id" in message
        and ("result" in message or "error" in message)
    )


class Introductions:
    """The capabilities each principal's last handshake-era ``initialize`` declared."""

    def __init__(self, max_principals: int = 1000, ttl: float = 1800.0) -> None:
        self._seen: TTLCache[str, dict[str, Any]] = TTLCache(max_principals, ttl)

    def remember(self, principal: str, message: Any) -> dict[str, Any] | None:
        """Keep what an ``initialize`` declares (returned; None for other messages)."""
        if not isinstance(message, dict) or message.get("method") != "initialize":
            return None
        params = message.get("params")
        capabilities = params.get("capabilities") if isinstance(params, dict) else None
        self.set(principal, capabilities if isinstance(capabilities, dict) else {})
        return self._seen[principal]

    def set(self, principal: str, capabilities: dict[str, Any]) -> None:
        self._seen[principal] = capabilities

    def of(self, principal: str) -> dict[str, Any]:
        return self._seen.get(principal) or {}


class CallStream:
    """One stateless POST's response, into which the call can write SSE events."""

    def __init__(
        self,
        send: Send,
        principal: str,
        replies: Replies,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        self._send = send
        self.principal = principal
        self.replies = replies
        self.capabilities = capabilities or {}
        self._lock = anyio.Lock()
        self._started = anyio.Event()
        self._sse = False
        self._open = False

    async def send(self, message: Message) -> None:
        """The ASGI ``send`` the SDK writes the response with."""
        async with self._lock:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                self._sse = headers.get(b"content-type", b"").startswith(b"text/event-stream")
                self._open = True
                self._started.set()
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                self._open = False
            await self._send(message)

    async def write(self, payload: dict[str, Any]) -> bool:
        """Write one JSON-RPC message as an SSE event; False if the stream is not open."""
        await self._started.wait()
        event = b"event: message\ndata: " + orjson.dumps(payload) + b"\n\n"
        async with self._lock:
            if not (self._sse and self._open):
                return False
            await self._send({"type": "http.response.body", "body": event, "more_body": True})
            return True


class Relay:
    """Answers and introductions between replicas, over the shared store's pub/sub."""

    def __init__(
        self, memory: SharedMemory, replies: Replies, introductions: Introductions
    ) -> None:
        self.memory = memory
        self.replies = replies
        self.introductions = introductions

    async def reply(self, principal: str, message: dict[str, Any]) -> None:
        await self.memory.publish(RELAY_TOPIC, orjson.dumps(["reply", principal, message]))

    async def introduce(self, principal: str, capabilities: dict[str, Any]) -> None:
        await self.memory.publish(RELAY_TOPIC, orjson.dumps(["hello", principal, capabilities]))

    async def listen(self) -> None:
        """Apply what the other replicas send, until cancelled."""
        async for raw in self.memory.subscribe(RELAY_TOPIC):
            try:
                kind, principal, body = orjson.loads(raw)
                if kind == "reply":
                    self.replies.deliver(principal, body)
                elif kind == "hello" and isinstance(body, dict):
                    self.introductions.set(principal, body)
            except (ValueError, TypeError, orjson.JSONDecodeError):
                logger.warning("an unreadable message on %s was ignored", RELAY_TOPIC)


current_stream: ContextVar[CallStream | None] = ContextVar("mcp_call_stream", default=None)
"""The response stream of the stateless POST being served (set by the endpoint)."""


class _SessionChannel:
    def __init__(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self.ctx = ctx

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        metadata = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        return await self.ctx.session.send_request(request, result_type, metadata=metadata)


class _StreamChannel:
    def __init__(self, stream: CallStream) -> None:
        self.stream = stream

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        with self.stream.replies.expect(self.stream.principal) as (request_id, slot):
            if not await self.stream.write({"jsonrpc": "2.0", "id": request_id, **data}):
                raise MCPError(types.INTERNAL_ERROR, "the call's stream is closed")
            await slot.done.wait()
        answer = slot.message or {}
        error = answer.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {}
            code = error.get("code")
            raise MCPError(
                code if isinstance(code, int) else types.INTERNAL_ERROR,
                str(error.get("message") or "the client refused the request"),
            )
        return result_type.model_validate(answer.get("result") or {}, by_name=False)


def client_declares(ctx: ServerRequestContext[Any, Any], capability: str) -> bool:
    """Whether the calling client declared ``capability`` (``sampling``, ``elicitation``, ...)."""
    wanted = types.ClientCapabilities.model_validate({capability: {}})
    if ctx.session.check_client_capability(wanted):
        return True
    stream = current_stream.get()
    return (
        stream is not None
        and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        and isinstance(stream.capabilities.get(capability), dict)
    )


def channel_of(ctx: ServerRequestContext[Any, Any]) -> Channel | None:
    """How this call can ask its client (None: it cannot, e.g. in the 2026-07-28 era)."""
    if ctx.session.can_send_request:
        return _SessionChannel(ctx)
    stream = current_stream.get()
    if stream is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    return _StreamChannel(stream)
