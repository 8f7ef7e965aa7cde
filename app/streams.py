"""The event streams still open when the drain closes them, ended cleanly.

sse-starlette, which the A2A and MCP SDKs stream through, ends its streams at
shutdown by cancelling them (``AppStatus.should_exit``): the response never
gets its last chunk, so the client reads a cut body ("incomplete chunked
read") rather than the end of a stream it may reconnect. That is what
happened to a stateful MCP session's standalone GET stream, which no run
feeds and which therefore lasts until the drain closes it. :class:`OpenStreams`
keeps every ``text/event-stream`` response in flight and, when the drain asks,
ends each one with the empty last chunk, dropping whatever its app sends after.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

END = {"type": "http.response.body", "body": b"", "more_body": False}
SECONDS_TO_END = 1.0
"""At most this long for the last chunks: a client that does not read may hold a send."""


class _Stream:
    """One response: its ``send``, and once it turns out to be an event stream, a lock and
    whether it has ended."""

    __slots__ = ("ended", "lock", "raw", "streams")

    def __init__(self, raw: Send, streams: set[_Stream]) -> None:
        self.raw = raw
        self.streams = streams
        self.lock: asyncio.Lock | None = None
        self.ended = False

    async def send(self, message: Message) -> None:
        if self.lock is None:
            if message["type"] == "http.response.start" and _is_event_stream(message):
                self.lock = asyncio.Lock()
                self.streams.add(self)
            await self.raw(message)
            return
        async with self.lock:
            if self.ended:
                return  # the drain ended it: the app's last words go nowhere
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.ended = True
                self.streams.discard(self)
            await self.raw(message)

    async def end(self) -> None:
        assert self.lock is not None
        async with self.lock:
            if not self.ended:
                self.ended = True
                await self.raw(END)


def _is_event_stream(start: Message) -> bool:
    for name, value in start.get("headers", ()):
        if name.lower() == b"content-type":
            return bool(value.lower().startswith(b"text/event-stream"))
    return False


class OpenStreams:
    """Pure ASGI layer keeping the event streams in flight, for :meth:`end_all`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._open: set[_Stream] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        stream = _Stream(send, self._open)
        try:
            await self.app(scope, receive, stream.send)
        finally:
            self._open.discard(stream)

    def __len__(self) -> int:
        return len(self._open)

    async def end_all(self) -> int:
        """End every open event stream with its last chunk; returns how many there were."""
        streams = list(self._open)
        self._open.clear()
        if streams:
            ending = asyncio.gather(*(stream.end() for stream in streams), return_exceptions=True)
            # Past it, the process ends them: uvicorn cancels what is left.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ending, SECONDS_TO_END)
        return len(streams)
