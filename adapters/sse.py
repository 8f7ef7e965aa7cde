"""Server-sent event responses with keep-alive comments, for the streams agenthost writes.

sse-starlette's :class:`EventSourceResponse` sends a comment line every
``EventSourceResponse.DEFAULT_PING_INTERVAL`` seconds while a stream is
silent (a long tool call, a slow first token), so that a proxy's read
time-out (nginx: 60 s) or a load balancer's idle time-out never cuts a live
stream. The app sets that interval from ``AGENTHOST_STREAM_KEEPALIVE_SECONDS``
for every stream of the process, the A2A and MCP SDKs' too (they stream
through the same class, but for one MCP path: :func:`set_keepalive`); SSE
clients ignore comment lines.

The events are written as given (``\\n`` line ends, as before), and the
keep-alive is ``: keep-alive\\n\\n``. The server's drain (``app/serving.py``)
ends these streams, not sse-starlette's shutdown signal: a stream ends when
its run does (interrupted runs write their last event first), or when
uvicorn cancels what is left.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
from collections.abc import AsyncIterator, Mapping

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.event import ensure_bytes
from starlette.types import Message, Receive, Scope, Send

from agenthost.agents.shields import cancel

KEEPALIVE = b": keep-alive\n\n"

_logger = logging.getLogger("sse_starlette.sse")  # the one sse-starlette logs each chunk to


class _EventStream(EventSourceResponse):
    """sse-starlette's response, cheaper per event and per stream.

    - No cancel scope around every send when there is no send time-out (ours
      never sets one): ``anyio.move_on_after(None)`` per event was about a third
      of what a streamed chunk cost the server beyond the socket write.
    - The events are sent from the request's own task, with one task watching
      for the disconnect (it cancels the stream, as sse-starlette's task group
      does) and a timer for the keep-alive, instead of a task group of four
      tasks per stream (the shutdown listener does nothing when the grace
      period is infinite, as ours is). HEAD and anything unusual take
      sse-starlette's own path.
    - On that path, an event that is already bytes (ours always are) is sent
      as it is: no ``ensure_bytes``, debug-log and time-out wrapper calls per
      event (sse-starlette's ``_stream_response`` otherwise, with the same
      clean-up when a send fails), and the lock between a keep-alive and the
      last event is asyncio's (anyio's takes a checkpoint even when free).
    """

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        plain = (
            scope["type"] == "http"
            and scope["method"].upper() != "HEAD"
            and self.send_timeout is None
            and self._shutdown_grace_period == math.inf
            and self._shutdown_event is None
            and self.data_sender_callable is None
            and self.client_close_handler_callable is None
        )
        if not plain:
            await super().__call__(scope, receive, send)
            return
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        gone = False

        async def watch() -> None:
            nonlocal gone
            while self.active:
                if (await receive())["type"] == "http.disconnect":
                    self.active, gone = False, True
                    cancel(task)  # after a save under way, if any
                    return

        pings: set[asyncio.Task[None]] = set()
        timer: list[asyncio.TimerHandle] = []
        interval = self._ping_interval
        # Keeps a ping and the last event apart, as sse-starlette's anyio lock does; an
        # asyncio lock costs no checkpoint (a trip through the loop) when it is free.
        lock = asyncio.Lock()

        async def send_ping() -> None:
            factory = self.ping_message_factory
            ping = ensure_bytes(factory() if factory else _keepalive(), self.sep)
            async with lock:
                if self.active:
                    await send({"type": "http.response.body", "body": ping, "more_body": True})
            if self.active:
                timer[0] = loop.call_later(interval, ping_due)

        def ping_due() -> None:
            ping = loop.create_task(send_ping())
            pings.add(ping)
            ping.add_done_callback(pings.discard)

        watcher = loop.create_task(watch())
        if interval > 0:
            timer.append(loop.call_later(interval, ping_due))
        try:
            await self._send_events(send, lock)
        except asyncio.CancelledError:
            # The client left: the stream ends quietly, as sse-starlette's does.
            if gone and task.uncancel() == 0:
                return
            raise
        finally:
            self.active = False
            watcher.cancel()
            for handle in timer:
                handle.cancel()
            for ping in list(pings):
                ping.cancel()
        if self.background is not None:
            await self.background()

    async def _send_events(self, send: Send, lock: asyncio.Lock) -> None:
        """sse-starlette's ``_stream_response`` without a send time-out (the plain path)."""
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        sep, debug = self.sep, _logger.isEnabledFor(logging.DEBUG)
        async for data in self.body_iterator:
            try:
                chunk = data if type(data) is bytes else ensure_bytes(data, sep)
                if debug:
                    _logger.debug("chunk: %s", chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except BaseException:
                await self._close_events()
                raise
        async with lock:
            self.active = False
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _close_events(self) -> None:
        # The iterator is suspended at its yield: close it before the error escapes.
        aclose = getattr(self.body_iterator, "aclose", None)
        if aclose is None:
            return
        with anyio.move_on_after(self._cleanup_timeout, shield=True) as cleanup:
            try:
                await aclose()
            except Exception:
                _logger.exception("Error closing body iterator after encoding or send failure")
        if cleanup.cancel_called:
            _logger.warning(
                "Body iterator cleanup cancelled after %s seconds", self._cleanup_timeout
            )


def _keepalive() -> ServerSentEvent:
    return ServerSentEvent(comment="keep-alive", sep="\n")


def event_stream(events: AsyncIterator[bytes], headers: Mapping[str, str]) -> EventSourceResponse:
    """``events`` (whole SSE events, as bytes) as a ``text/event-stream`` response."""
    return _EventStream(
        events,
        headers=headers,
        sep="\n",
        ping_message_factory=_keepalive,
        shutdown_grace_period=math.inf,
    )


def set_keepalive(seconds: float) -> None:
    """Every SSE stream of the process sends a keep-alive after ``seconds`` of silence (0: none).

    The MCP SDK answers a 2026-07-28 (stateless era) request with its own
    SSE writer, which pings after its module's ``_SSE_PING_INTERVAL`` (read
    at each request): that one follows the setting too, while it exists,
    if the MCP server is loaded (call this once the adapters are built: a
    process that serves no MCP does not import the MCP SDK for it).
    """
    EventSourceResponse.DEFAULT_PING_INTERVAL = seconds  # type: ignore[assignment]
    if "mcp.server" not in sys.modules:
        return
    from mcp.server import _streamable_http_modern as modern

    if hasattr(modern, "_SSE_PING_INTERVAL"):
        modern._SSE_PING_INTERVAL = seconds or math.inf
