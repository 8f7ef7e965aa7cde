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

import math
from collections.abc import AsyncIterator, Mapping

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Message, Send

KEEPALIVE = b": keep-alive\n\n"


class _EventStream(EventSourceResponse):
    """sse-starlette's response, without a cancel scope around every send when there is
    no send time-out (ours never sets one): ``anyio.move_on_after(None)`` per event was
    about a third of what a streamed chunk cost the server beyond the socket write."""

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)


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
    at each request): that one follows the setting too, while it exists.
    """
    EventSourceResponse.DEFAULT_PING_INTERVAL = seconds  # type: ignore[assignment]
    try:
        from mcp.server import _streamable_http_modern as modern
    except ImportError:  # the mcp extra is not installed
        return
    if hasattr(modern, "_SSE_PING_INTERVAL"):
        modern._SSE_PING_INTERVAL = seconds or math.inf
