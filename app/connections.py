"""Per-connection limits in front of uvicorn's HTTP protocol, through public parts only.

uvicorn bounds the keep-alive wait and the body size (via the app), but a
new connection may take forever to send its request head, a body may
trickle in a byte at a time, a head may be hundreds of megabytes (parsing
that is worse than linear) and connections are not capped. Per connection,
this adds:

- a time limit for the request head (from the connection's start, or from
  the first byte of the next request on a kept-alive connection) and one
  for the body (from the end of the head): 408, then the connection closes;
- a maximum head size and header count: 431 before the head is parsed
  further;
- a cap on open connections: past it, the longest-idle connection (one
  with no request in progress) is closed to make room, so stalled clients
  cannot lock out real ones; with none idle, the oldest slow body (a request
  whose body is still arriving) of the principal or client address holding
  the most slow bodies is dropped with 408; with none of those either, the
  oldest new connection (see below), else the new connection gets 503. A
  connection that has sent nothing yet counts as idle only once it has been
  silent for half the head time-out: before that it is new, not stalled (the
  event loop accepts a batch of connections before it reads any, so a
  client's head is often in the socket, unread, when the next connection
  comes; closing it then failed a request that had done nothing wrong);
- a cap on open connections per client address (before auth, so it holds
  without a key): past it, that address's longest-idle connection is closed,
  else the new one gets 429;
- a time limit for a client that stops reading its response: once the
  transport's write buffer is full (uvicorn then makes the app's next
  ``send`` wait), the connection is aborted if the client has read less
  than :data:`MIN_PROGRESS` in ``send_stall_timeout``; the app sees a
  disconnect.

How, with nothing of uvicorn's but its public ``http`` setting:

- :class:`LimitedHTTPProtocol` (given to uvicorn as ``http=``) is an
  ``asyncio.Protocol`` that wraps uvicorn's own ``httptools`` protocol,
  made from the arguments uvicorn passes and never looked into. Every byte
  reaches it first: it counts the head's bytes, runs httptools' public
  parser alongside (headers, end of head, end of body; it skips body bytes
  without a callback), arms its own timer, and answers a refusal itself on
  the transport before closing it.
- :class:`ResponseTracking`, a pure ASGI layer around the app, says when a
  request's response starts and ends (so which connections are idle, and
  whether a refusal may still write a status line) and holds the request's
  scope, where :class:`~agenthost.app.guards.APIKeyGuard` puts the
  principal. It finds its connection through a context variable that the
  protocol sets while uvicorn parses the bytes: uvicorn creates the
  request's task right then, and a task copies the context it was created
  in (``scope["client"]`` would not do: behind a trusted proxy uvicorn
  rewrites it from ``X-Forwarded-For``).

Per request this costs a second (C) parse of the bytes, four parser
callbacks and one per header, and one wrapped ``send`` per response message.
"""

from __future__ import annotations

import asyncio
import fcntl
import importlib
import logging
import sys
import termios
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from http import HTTPStatus
from typing import Any, ClassVar, cast

import httptools
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.config import HTTP_PROTOCOLS

logger = logging.getLogger("agenthost")

MIN_PROGRESS = 64 * 1024
"""Bytes a client must read within each send-stall period while writing is paused."""

# The ioctl telling a TCP socket's bytes not yet acknowledged (SIOCOUTQ on Linux).
_OUTQ: int | None = getattr(termios, "TIOCOUTQ", None) if sys.platform == "linux" else None


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one connection may take; see docs/security.md."""

    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    max_connections: int = 2048
    max_connections_per_client: int = 0  # 0: no cap
    send_stall_timeout: float = 30.0  # 0: none


@dataclass(eq=False)
class _Connections:
    """The open connections of one server, oldest first, and how many per client address."""

    open: dict[LimitedHTTPProtocol, None] = field(default_factory=dict)
    clients: Counter[str] = field(default_factory=Counter)


# The connection whose bytes uvicorn is parsing: the request tasks it starts inherit it.
_parsing: ContextVar[LimitedHTTPProtocol | None] = ContextVar("agenthost_connection", default=None)


@cache
def _uvicorn_protocol(name: str) -> type[asyncio.Protocol]:
    """uvicorn's protocol class for its public ``http`` choice ``name``."""
    module, _, attribute = HTTP_PROTOCOLS[name].partition(":")
    protocol: type[asyncio.Protocol] = getattr(importlib.import_module(module), attribute)
    return protocol


class _Refused(Exception):
    """Raised from a parser callback to stop parsing and answer ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class LimitedHTTPProtocol(asyncio.Protocol):
    """uvicorn's httptools protocol behind head/body time-outs, head limits and connection caps."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    connections: ClassVar[_Connections] = _Connections()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.inner = _uvicorn_protocol("httptools")(*args, **kwargs)
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0  # when the timer fires
        self.deadline: float | None = None  # when the current time limit ends, if one runs
        self.deadline_reason = ""
        self.in_head = True
        self.head_bytes = 0
        self.head_tail = b""  # the last bytes of the head so far, where its end may start
        self.header_count = 0
        self.refusal: _Refused | None = None
        self.in_body = False  # the head is in, the body is still arriving
        self.body_since = 0.0
        self.requests = 0  # heads parsed
        self.responses = 0  # responses ended (ResponseTracking)
        self.responding = False  # a response has started and not ended
        self.answered = False  # the app answered (began to) the request whose head came last
        self.scope: Scope | None = None  # the request the app is handling
        self.idle_since = self.loop.time()
        self.heard = False  # a byte came (a silent new connection is not idle yet)
        self.client_host = ""
        self.counted = False  # in ``connections``
        self.done = False  # refused, or handed to another protocol: nothing more is parsed
        self.stall_timer: asyncio.TimerHandle | None = None  # runs while writing is paused
        self.stall_pending: int | None = None  # bytes not yet delivered when it was armed

    @classmethod
    def with_limits(cls, limits: ConnectionLimits) -> type[LimitedHTTPProtocol]:
        """A protocol class bound to ``limits`` (uvicorn instantiates it per connection)."""
        attributes = {"limits": limits, "connections": _Connections()}
        return type("LimitedHTTPProtocol", (cls,), attributes)

    # Connections

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)
        self.inner.connection_made(transport)
        self._arm(self.limits.header_timeout, "the request head took too long")
        peer = transport.get_extra_info("peername")
        self.client_host = str(peer[0]) if isinstance(peer, tuple) else ""
        connections = self.connections
        connections.open[self] = None
        connections.clients[self.client_host] += 1
        self.counted = True
        per_client = self.limits.max_connections_per_client
        if per_client and connections.clients[self.client_host] > per_client:
            if not self._make_room(self.client_host, drop_slow=False):
                self._answer(429, "too many connections from this address")
        elif len(connections.open) > self.limits.max_connections and not self._make_room():
            self._answer(503, "too many connections")

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self._stop_stall_timer()
        self._uncount()
        self.inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    # Writes: uvicorn's flow control makes the app's next send wait while the
    # transport's buffer is over its high-water mark, so a client that stops
    # reading holds one response message and its run, never a growing buffer;
    # past the stall limit the connection is aborted, which the app sees as a
    # disconnect (a run streaming to it is cancelled).

    # A slow reader is not a stalled one: once the kernel's send queue is full
    # the socket turns writable again only after the client has read a large
    # part of it (half of a queue of up to 4 MiB), so writing may stay paused
    # for longer than the limit while the client reads steadily. Each time the
    # limit ends, the bytes still to deliver (the kernel's unacknowledged ones,
    # where Linux tells them, and the transport's) must have gone down by
    # MIN_PROGRESS.

    def pause_writing(self) -> None:
        stall = self.limits.send_stall_timeout
        if stall and self.stall_timer is None:
            self.stall_pending = self._pending()
            self.stall_timer = self.loop.call_later(stall, self._stalled)
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self._stop_stall_timer()
        self.inner.resume_writing()

    def _stop_stall_timer(self) -> None:
        if self.stall_timer is not None:
            self.stall_timer.cancel()
            self.stall_timer = None

    def _pending(self) -> int | None:
        """Bytes written but not yet taken by the client, or None if the kernel does not say."""
        transport = self.transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if transport is None or sock is None or _OUTQ is None:
            return None
        try:
            unacked = fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0")
        except (OSError, ValueError):
            return None
        return int.from_bytes(unacked, sys.byteorder) + transport.get_write_buffer_size()

    def _stalled(self) -> None:
        self.stall_timer = None
        pending = self._pending()
        before = self.stall_pending
        # A client that reads nothing still frees a little now and then (a
        # zero-window probe, its kernel compacting its receive queue): what counts
        # is reading at least MIN_PROGRESS bytes in the period.
        if pending is not None and before is not None and pending <= before - MIN_PROGRESS:
            self.stall_pending = pending  # the client read: another period
            self.stall_timer = self.loop.call_later(self.limits.send_stall_timeout, self._stalled)
            return
        self.done = True
        logger.info(
            "closed a connection from %s: it read nothing of its response for %.1f s",
            self.client_host,
            self.limits.send_stall_timeout,
        )
        if self.transport is not None:
            # abort(), not close(): close() would wait to flush what the client never reads.
            self.transport.abort()

    def _uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.connections.open.pop(self, None)
            clients = self.connections.clients
            clients[self.client_host] -= 1
            if not clients[self.client_host]:
                del clients[self.client_host]

    def _make_room(self, client: str | None = None, *, drop_slow: bool = True) -> bool:
        """Close another connection (of ``client`` only, if given); False if none may go.

        The longest-idle one goes first; then (``drop_slow``) the oldest slow
        body of the owner holding the most slow bodies; then the oldest new one.
        """
        others = [
            c
            for c in self.connections.open
            if c is not self
            and c.transport is not None
            and not c.transport.is_closing()
            and (client is None or c.client_host == client)
        ]
        waiting = [c for c in others if c.responses >= c.requests]
        silent_since = self.loop.time() - self.limits.header_timeout / 2
        idle = [c for c in waiting if c.heard or c.idle_since <= silent_since]
        slow = [c for c in others if c.in_body and c.may_answer()] if drop_slow else []
        if idle:
            victim = min(idle, key=lambda c: c.idle_since)
        elif slow:
            held = Counter(c.owner() for c in slow)
            worst = max(held, key=held.__getitem__)
            victim = min((c for c in slow if c.owner() == worst), key=lambda c: c.body_since)
            victim._answer(408, "the request body was too slow for a full server")
            victim._uncount()
            return True
        elif waiting:  # new connections only: the oldest goes
            victim = min(waiting, key=lambda c: c.idle_since)
        else:
            return False
        assert victim.transport is not None
        victim.transport.close()
        victim._uncount()
        return True

    def may_answer(self) -> bool:
        """No response is under way, nor was one begun for the request now arriving."""
        return not (self.responding or self.answered)

    def owner(self) -> str:
        """Who holds this connection's request: its principal, else its client address."""
        principal = (self.scope or {}).get("state", {}).get("principal")
        return f"principal {principal}" if principal else f"address {self.client_host}"

    # Time-outs

    # One timer per connection, moved only when a limit ends before it fires: on a
    # kept-alive connection the per-request limits then cost about one timer per
    # head timeout, not a call_later and a cancel per limit per request.

    def _arm(self, seconds: float, reason: str) -> None:
        deadline = self.loop.time() + seconds
        self.deadline, self.deadline_reason = deadline, reason
        if self.timer is None or self.timer_at > deadline:
            self._schedule(deadline)

    def _schedule(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer, self.timer_at = self.loop.call_at(when, self._expire), when

    def _expire(self) -> None:
        self.timer = None
        deadline = self.deadline
        if deadline is None:
            return
        if deadline > self.timer_at:  # moved on since the timer was set
            self._schedule(deadline)
            return
        self._answer(408, self.deadline_reason)

    def _stop_timer(self) -> None:
        self.deadline = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _answer(self, status: int, message: str) -> None:
        """Answer ``status`` with a short text body and close, if no response has started."""
        self.deadline = None  # a pending timer finds nothing to do
        self.done = True
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if self.may_answer():
            body = message.encode()
            phrase = HTTPStatus(status).phrase.encode()
            transport.write(
                b"HTTP/1.1 %d %s\r\n" % (status, phrase)
                + b"content-type: text/plain; charset=utf-8\r\n"
                + b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
                + body
            )
        transport.close()

    # Bytes: through the limits and our parser first, then to uvicorn's protocol

    def data_received(self, data: bytes) -> None:
        if self.done:
            return
        self.heard = True
        limit = self.limits.max_header_bytes
        in_head_before = self.in_head
        if in_head_before and self.head_bytes + len(data) > limit:
            # Count the head's bytes in this chunk too, up to where the head ends.
            end = (self.head_tail + data).find(b"\r\n\r\n")
            in_head = len(data) if end < 0 else end + 4 - len(self.head_tail)
            if self.head_bytes + in_head > limit:
                self._answer(431, f"request head larger than {limit} bytes")
                return
        upgrade = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            upgrade = True
        except httptools.HttpParserError:
            if self.refusal is not None:
                self._answer(self.refusal.status, str(self.refusal))
                return
            self.done = True  # malformed: uvicorn's protocol answers 400 itself
        token = _parsing.set(self)
        try:
            self.inner.data_received(data)
        finally:
            _parsing.reset(token)
        if upgrade and self.transport is not None and self.transport.get_protocol() is not self:
            # uvicorn handed the connection to its WebSocket protocol: no longer ours.
            self.done = True
            self._stop_timer()
            self._uncount()
        elif in_head_before and self.in_head:
            # The head did not end in this chunk: all of it counts against the limit.
            self.head_bytes += len(data)
            self.head_tail = (self.head_tail + data)[-3:]

    # httptools parser callbacks (only these: it skips body bytes without calling back)

    def on_message_begin(self) -> None:
        self.answered = False
        if not self.in_head:
            # The next request on a kept-alive connection: its head is timed from now.
            self.in_head, self.head_bytes, self.header_count = True, 0, 0
            self.head_tail = b""
            self._arm(self.limits.header_timeout, "the request head took too long")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_count += 1
        if self.header_count > self.limits.max_headers:
            self.refusal = _Refused(431, f"more than {self.limits.max_headers} headers")
            raise self.refusal

    def on_headers_complete(self) -> None:
        self.in_head = False
        self.requests += 1
        # Disarmed by on_message_complete, at once for a request without a body.
        self._arm(self.limits.body_timeout, "the request body took too long")
        self.in_body, self.body_since = True, self.loop.time()

    def on_message_complete(self) -> None:
        self.deadline = None
        self.in_body = False

    # Told by ResponseTracking

    def request_started(self, scope: Scope) -> None:
        """The app took a request of this connection (its scope will hold the principal)."""
        self.scope = scope

    def response_started(self) -> None:
        """The app began its response: a refusal may no longer write a status line."""
        self.responding = self.answered = True

    def response_ended(self) -> None:
        """The response ended (or the app did): the connection is idle from now."""
        self.responding, self.scope = False, None
        self.responses += 1
        self.idle_since = self.loop.time()


class ResponseTracking:
    """Pure ASGI layer telling :class:`LimitedHTTPProtocol` when each response starts and ends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = _parsing.get()
        if connection is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Requests the app makes to itself in this task are not this connection's.
        _parsing.set(None)
        connection.request_started(scope)
        ended = False

        async def tracked(message: Message) -> None:
            nonlocal ended
            kind = message["type"]
            if kind == "http.response.start":
                connection.response_started()
            elif kind == "http.response.body" and not message.get("more_body", False):
                ended = True
                connection.response_ended()
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        finally:
            if not ended:  # the app failed or was cancelled: uvicorn ends the response
                connection.response_ended()
