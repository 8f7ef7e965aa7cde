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
    """One response: its ``send``, whether it is an event stream, and whether it has ended.

    No lock per chunk: a chunk goes straight to the server's ``send``, counted
    while it is there, and :meth:`end` (the drain's, once per stream) marks the
    stream ended first, so that no later chunk goes out, then waits for the
    chunks in flight before it writes the last one.
    """

    __slots__ = ("ended", "idle", "raw", "sending", "streams", "tracked")

    def __init__(self, raw: Send, streams: set[_Stream]) -> None:
        self.raw = raw
        self.streams = streams
        self.tracked = False  # an event stream: the drain may end it
        self.ended = False
        self.sending = 0  # chunks in the server's send now
        self.idle: asyncio.Event | None = None  # set when they are out, while end() waits

    async def send(self, message: Message) -> None:
        if not self.tracked:
            if message["type"] == "http.response.start" and _is_event_stream(message):
                self.tracked = True
                self.streams.add(self)
            await self.raw(message)
            return
        if self.ended:
            return  # the drain ended it: the app's last words go nowhere
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.ended = True
            self.streams.discard(self)
        self.sending += 1
        try:
            await self.raw(message)
        finally:
            self.sending -= 1
            if not self.sending and self.idle is not None:
                self.idle.set()

    async def end(self) -> None:
        assert self.tracked
        if self.ended:
            return
        self.ended = True
        while self.sending:
            self.idle = asyncio.Event()
            await self.idle.wait()
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
