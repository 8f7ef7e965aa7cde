"""uvicorn's HTTP protocol with the limits a public server needs.

uvicorn bounds the keep-alive wait and the body size (via the app), but a
new connection may take forever to send its request head, a body may
trickle in a byte at a time, a head may be hundreds of megabytes (parsing
that is worse than linear) and connections are not capped. This subclass of
uvicorn's ``httptools`` protocol, passed through uvicorn's ``http`` setting,
adds, per connection:

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
  new connection gets 503;
- a cap on open connections per client address (before auth, so it holds
  without a key): past it, that address's longest-idle connection is closed,
  else the new one gets 429.

The principal is the one :class:`~agenthost.app.guards.APIKeyGuard` put in
the request's scope state (uvicorn hands the app the protocol's own scope).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one connection may take; see docs/security.md."""

    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    max_connections: int = 2048
    max_connections_per_client: int = 0  # 0: no cap


class _Refused(Exception):
    """Raised from a parser callback to stop parsing and answer ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class LimitedHTTPProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` with head/body time-outs, head limits and a connection cap."""

    limits = ConnectionLimits()
    # Open connections per client address: one table per server (``with_limits``).
    clients: ClassVar[Counter[str]] = Counter()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0  # when the timer fires
        self._deadline: float | None = None  # when the current time limit ends, if one runs
        self._deadline_reason = ""
        self._in_head = True
        self._head_bytes = 0
        self._head_tail = b""  # the last bytes of the head so far, where its end may start
        self._header_count = 0
        self._refusal: _Refused | None = None
        self._idle_since = 0.0
        self._in_body = False  # the head is in, the body is still arriving
        self._body_since = 0.0
        self._client_host = ""
        self._counted = False  # in ``clients``

    @classmethod
    def with_limits(cls, limits: ConnectionLimits) -> type[LimitedHTTPProtocol]:
        """A protocol class bound to ``limits`` (uvicorn instantiates it per connection)."""
        return type("LimitedHTTPProtocol", (cls,), {"limits": limits, "clients": Counter()})

    # Connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_since = self.loop.time()
        self._arm(self.limits.header_timeout, "the request head took too long")
        self._client_host = self.client[0] if self.client else ""
        self.clients[self._client_host] += 1
        self._counted = True
        per_client = self.limits.max_connections_per_client
        if per_client and self.clients[self._client_host] > per_client:
            if not self._make_room(self._client_host, drop_slow=False):
                self._answer(429, "too many connections from this address")
        elif len(self.connections) > self.limits.max_connections and not self._make_room():
            self._answer(503, "too many connections")

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self._uncount()
        super().connection_lost(exc)

    def _uncount(self) -> None:
        if self._counted:
            self._counted = False
            self.clients[self._client_host] -= 1
            if not self.clients[self._client_host]:
                del self.clients[self._client_host]

    def _make_room(self, client: str | None = None, *, drop_slow: bool = True) -> bool:
        """Close another connection (of ``client`` only, if given); False if none may go.

        The longest-idle one goes first; then (``drop_slow``) the oldest slow
        body of the owner holding the most slow bodies.
        """
        others = [
            c
            for c in self.connections
            if c is not self
            and isinstance(c, LimitedHTTPProtocol)
            and not c.transport.is_closing()
            and (client is None or c._client_host == client)
        ]
        idle = [c for c in others if c.cycle is None or c.cycle.response_complete]
        if idle:
            victim = min(idle, key=lambda c: c._idle_since)
            victim.transport.close()
        else:
            slow = [c for c in others if c._in_body and not c.cycle.response_started]
            if not drop_slow or not slow:
                return False
            held = Counter(c._owner() for c in slow)
            worst = max(held, key=held.__getitem__)
            victim = min((c for c in slow if c._owner() == worst), key=lambda c: c._body_since)
            victim._answer(408, "the request body was too slow for a full server")
        victim._uncount()
        self.connections.discard(victim)
        return True

    def _owner(self) -> str:
        """Who holds this connection's request: its principal, else its client address."""
        principal = (self.scope or {}).get("state", {}).get("principal")
        return f"principal {principal}" if principal else f"address {self._client_host}"

    # Time-outs

    # One timer per connection, moved only when a limit ends before it fires: on a
    # kept-alive connection the per-request limits then cost about one timer per
    # head timeout, not a call_later and a cancel per limit per request.

    def _arm(self, seconds: float, reason: str) -> None:
        deadline = self.loop.time() + seconds
        self._deadline, self._deadline_reason = deadline, reason
        if self._timer is None or self._timer_at > deadline:
            self._schedule(deadline)

    def _disarm(self) -> None:
        self._deadline = None  # a pending timer finds nothing to do

    def _schedule(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = self.loop.call_at(when, self._expire), when

    def _expire(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None:
            return
        if deadline > self._timer_at:  # moved on since the timer was set
            self._schedule(deadline)
            return
        self._answer(408, self._deadline_reason)

    def _stop_timer(self) -> None:
        self._deadline = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _answer(self, status: int, message: str) -> None:
        """Answer ``status`` with a short text body and close, if no response has started."""
        self._disarm()
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            body = message.encode()
            self.transport.write(
                b"".join(
                    [
                        STATUS_LINE[status],
                        b"content-type: text/plain; charset=utf-8\r\n",
                        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body),
                        body,
                    ]
                )
            )
        self.transport.close()

    # Parsing

    def data_received(self, data: bytes) -> None:
        limit = self.limits.max_header_bytes
        if self._in_head and self._head_bytes > limit:
            return
        if self._in_head and self._head_bytes + len(data) > limit:
            # Count the head's bytes in this chunk too, up to where the head ends.
            end = (self._head_tail + data).find(b"\r\n\r\n")
            in_head = len(data) if end < 0 else end + 4 - len(self._head_tail)
            if self._head_bytes + in_head > limit:
                self._head_bytes += in_head
                self._answer(431, f"request head larger than {limit} bytes")
                return
        in_head_before = self._in_head
        super().data_received(data)
        if in_head_before and self._in_head and not self.transport.is_closing():
            # The head did not end in this chunk: all of it counts against the limit.
            self._head_bytes += len(data)
            self._head_tail = (self._head_tail + data)[-3:]

    def send_400_response(self, msg: str) -> None:
        refusal, self._refusal = self._refusal, None
        if refusal is not None:
            self._answer(refusal.status, str(refusal))
        else:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if not self._in_head:
            # The next request on a kept-alive connection: its head is timed from now.
            self._in_head, self._head_bytes, self._header_count = True, 0, 0
            self._head_tail = b""
            self._arm(self.limits.header_timeout, "the request head took too long")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._refusal = _Refused(431, f"more than {self.limits.max_headers} headers")
            raise self._refusal
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()
        # Disarmed by on_message_complete, at once for a request without a body.
        self._arm(self.limits.body_timeout, "the request body took too long")
        self._in_body, self._body_since = True, self.loop.time()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_body = False
        super().on_message_complete()

    def on_response_complete(self) -> None:
        self._idle_since = self.loop.time()
        super().on_response_complete()
