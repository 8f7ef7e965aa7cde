"""Server-sent event streams with keep-alive comments, on Starlette's public API.

A stream sends a comment line (``: keep-alive``) after every ``keepalive``
seconds of silence (a long tool call, a slow first token), so that a
proxy's read time-out (nginx: 60 s) or a load balancer's idle time-out never
cuts a live stream; SSE clients ignore comment lines.

- :class:`EventStream` is the response agenthost's own streams use: the
  events are sent from the request's task (an :class:`EventSource`, a run's
  consumer, writes each event itself as it makes it; any other iterator of
  events is iterated), one task watches for the
  client's disconnect, one timer sends the keep-alive (bench/README.md: the
  per-chunk cost of this path was tuned; a task group per stream, a cancel
  scope or a lock with a checkpoint per event cost a third more).
- :class:`KeepAlive` is an ASGI layer the app puts around its routes, with
  the interval of ``AGENTHOST_STREAM_KEEPALIVE_SECONDS``. It gives that
  interval to each :class:`EventStream` beneath it (which then keeps itself
  alive, at no cost per chunk to the layer), and keeps alive any other
  ``text/event-stream`` answer (the A2A and MCP SDKs' streams) by writing the
  comment between two events when the app has been silent that long.

- :func:`passes_bodies` and :func:`body_send`: a small protocol between the
  app's send wrappers and :class:`EventStream`. A wrapper that only acts on
  ``http.response.start`` (the request id header, the body limit, the span's
  status) declares that it hands every ``http.response.body`` to the send it
  wraps unchanged; once its response has started, an :class:`EventStream`
  sends its chunks past every such layer, straight to the first send beneath
  that declared nothing (Starlette's ``ServerErrorMiddleware``, or a layer
  that acts on bodies: ``HeadAsGet``, the drain's ``OpenStreams``). An error
  of that send still propagates through every layer, as before.

The server's drain (``app/serving.py``) ends these streams: a stream ends
when its run does (interrupted runs write their last event first), or when
uvicorn cancels what is left.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Protocol, TypeAlias, runtime_checkable

from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.agents.shields import cancel

KEEPALIVE = b": keep-alive\n\n"
DEFAULT_KEEPALIVE_SECONDS = 15.0  # sse-starlette's, where no layer gives one
SCOPE_KEY = "agenthost.keepalive"  # the request's KeepAlive watch, in its ASGI scope
PASSES_BODIES = "agenthost.passes_bodies"  # the layers' declarations (passes_bodies), in the scope

Passing: TypeAlias = dict[Send, tuple[Send, Callable[[], bool] | None]]


def passes_bodies(
    scope: Scope, wrapped: Send, send: Send, when: Callable[[], bool] | None = None
) -> None:
    """Declare that ``wrapped``, a layer's send around ``send``, hands every
    ``http.response.body`` message to ``send`` unchanged (if ``when`` is given: from
    the moment it returns True on), so that :func:`body_send` may skip it.

    Only for a layer that does nothing else with a body: not even count it.
    """
    passing: Passing = scope.setdefault(PASSES_BODIES, {})
    passing[wrapped] = (send, when)


def body_send(scope: Scope, send: Send) -> Send:
    """Where a started response's bodies may go: past every layer beneath ``send``
    that declared it passes them (:func:`passes_bodies`), up to the first that did not."""
    passing: Passing | None = scope.get(PASSES_BODIES)
    if passing:
        while (through := passing.get(send)) is not None:
            outer, when = through
            if when is not None and not when():
                break
            send = outer
    return send


@runtime_checkable
class EventSource(Protocol):
    """Events that write themselves (a run's consumer, ``adapters/runs.py``): no
    generator between what makes an event and the socket."""

    async def write_to(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        """Make the events, awaiting ``write`` with each (whole SSE events, as bytes)."""

    async def aclose(self) -> None:
        """Give up the events unmade (a ``HEAD`` request)."""


Events = AsyncIterator[bytes] | EventSource


class EventStream(Response):
    """``events`` (whole SSE events, as bytes) as a ``text/event-stream`` response.

    ``keepalive``: seconds of silence before a comment (0: none); None takes
    the :class:`KeepAlive` layer's, or :data:`DEFAULT_KEEPALIVE_SECONDS`.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        events: Events,
        headers: Mapping[str, str] | None = None,
        *,
        keepalive: float | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        self.events = events
        self.keepalive = keepalive
        self.status_code = 200
        self.background = background
        sent = {"Cache-Control": "no-store", **(headers or {})}
        sent |= {"Connection": "keep-alive", "X-Accel-Buffering": "no"}
        self.init_headers(sent)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        interval = self.keepalive
        watch = scope.get(SCOPE_KEY)
        if isinstance(watch, _Watch):
            send = watch.hand_over(send)
            if interval is None:
                interval = watch.seconds
        if interval is None:
            interval = DEFAULT_KEEPALIVE_SECONDS
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        if scope.get("method") == "HEAD":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            await _close(self.events)
            return
        # Started: the chunks skip the layers that only act on the start.
        await self._stream(receive, body_send(scope, send), interval)
        if self.background is not None:
            await self.background()

    async def _stream(self, receive: Receive, send: Send, interval: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        # active: the stream still sends; gone: the client left.
        state = {"active": True, "gone": False}
        # Keeps a ping and the end of the body apart; asyncio's lock costs no
        # checkpoint (a trip through the loop) when it is free.
        lock = asyncio.Lock()

        async def watch() -> None:
            while state["active"]:
                if (await receive())["type"] == "http.disconnect":
                    state["active"], state["gone"] = False, True
                    cancel(task)  # after a save under way, if any
                    return

        pings: set[asyncio.Task[None]] = set()
        timer: list[asyncio.TimerHandle] = []

        async def send_ping() -> None:
            async with lock:
                if state["active"]:
                    await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
            if state["active"]:
                timer[0] = loop.call_later(interval, ping_due)

        def ping_due() -> None:
            ping = loop.create_task(send_ping())
            pings.add(ping)
            ping.add_done_callback(pings.discard)

        watcher = loop.create_task(watch())
        if interval > 0:
            timer.append(loop.call_later(interval, ping_due))

        async def write(chunk: bytes) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})

        try:
            events = self.events
            if isinstance(events, EventSource):
                await events.write_to(write)
            else:
                async for chunk in events:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            async with lock:
                state["active"] = False
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            # The client left: the stream ends quietly.
            await _close(self.events)
            if state["gone"] and task.uncancel() == 0:
                return
            raise
        except BaseException:
            await _close(self.events)
            raise
        finally:
            state["active"] = False
            watcher.cancel()
            for handle in timer:
                handle.cancel()
            for ping in list(pings):
                ping.cancel()


async def _close(events: Events) -> None:
    # The iterator may be suspended at its yield: close it before the error escapes.
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


def event_stream(
    events: Events, headers: Mapping[str, str], *, keepalive: float | None = None
) -> EventStream:
    """``events`` (whole SSE events, as bytes) as a ``text/event-stream`` response."""
    return EventStream(events, headers, keepalive=keepalive)


def keepalive_seconds(scope: Scope) -> float | None:
    """The interval the :class:`KeepAlive` layer gives this request, None without one."""
    watch = scope.get(SCOPE_KEY)
    return watch.seconds if isinstance(watch, _Watch) else None


class KeepAlive:
    """Keep-alive comments every ``seconds`` of silence on the SSE answers of ``app``.

    An :class:`EventStream` beneath takes the interval and its own send back
    (:meth:`_Watch.hand_over`); any other ``text/event-stream`` answer gets
    ``: keep-alive`` between two events after ``seconds`` without a send.
    """

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        watch = _Watch(send, self.seconds, scope.get("method") == "HEAD")
        scope[SCOPE_KEY] = watch
        try:
            await self.app(scope, receive, watch.send)
        finally:
            watch.stop()


class _Watch:
    """One request's keep-alive: passes messages through, pings a silent SSE answer."""

    def __init__(self, send: Send, seconds: float, head: bool) -> None:
        self.seconds = seconds
        self._send = send
        self._watching = False  # an SSE answer of another app is under way
        self._off = head or seconds <= 0
        self._last = 0.0  # loop time of the last send
        self._boundary = True  # the last body ended an event: a comment may follow
        self._lock: asyncio.Lock | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._ping: asyncio.Task[None] | None = None

    def hand_over(self, send: Send) -> Send:
        """For an :class:`EventStream`: it keeps itself alive; its send, past this layer if
        nothing stands between."""
        self._off = True
        return self._send if send == self.send else send

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not self._off:
            self._watch_if_sse(message)
        if not self._watching:
            await self._send(message)
            return
        assert self._lock is not None
        async with self._lock:
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                if body:
                    self._boundary = body.endswith((b"\n\n", b"\r\n\r\n", b"\r\r"))
                if not message.get("more_body", False):
                    self.stop()
            self._last = asyncio.get_running_loop().time()
            await self._send(message)

    def _watch_if_sse(self, message: Message) -> None:
        for name, value in message.get("headers", ()):
            if name.lower() == b"content-type" and value.startswith(b"text/event-stream"):
                loop = asyncio.get_running_loop()
                self._watching, self._lock = True, asyncio.Lock()
                self._last = loop.time()
                self._timer = loop.call_later(self.seconds, self._due)
                return

    def _due(self) -> None:
        if not self._watching:
            return
        loop = asyncio.get_running_loop()
        silent = loop.time() - self._last
        if silent >= self.seconds and self._boundary and self._ping is None:
            self._ping = loop.create_task(self._send_ping())
            silent = 0.0
        self._timer = loop.call_later(max(self.seconds - silent, 0.01), self._due)

    async def _send_ping(self) -> None:
        assert self._lock is not None
        try:
            async with self._lock:
                if self._watching:
                    self._last = asyncio.get_running_loop().time()
                    ping = {"type": "http.response.body", "body": KEEPALIVE, "more_body": True}
                    await self._send(ping)
        except Exception:  # the client left: the app's own send will say so
            self.stop()
        finally:
            self._ping = None

    def stop(self) -> None:
        """No more keep-alives (the answer ended, or the request did)."""
        self._watching = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._ping is not None and self._ping is not asyncio.current_task():
            self._ping.cancel()
