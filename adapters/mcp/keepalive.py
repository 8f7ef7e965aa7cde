"""The MCP SDK's wait before it streams a 2026-07-28 answer: the app's keep-alive.

For a request of the stateless era the SDK writes its own SSE: it waits
``_SSE_PING_INTERVAL`` seconds (15) for a first event before it sends the
response head, then pings that often. Until the head is sent no ASGI layer
can keep the request alive (the answer may still become JSON), so a proxy
whose read time-out is shorter cuts a silent tool call. The SDK has no
public option for it: this sets its module's value, at each request, to the
interval the :class:`~agenthost.adapters.sse.KeepAlive` layer gives the
request. Listed in tests/test_private_symbols.py; mcp is capped below its
next minor for it.
"""

from __future__ import annotations

import math

from mcp.server import _streamable_http_modern as modern
from starlette.types import Scope

from agenthost.adapters.sse import keepalive_seconds


def follow_keepalive(scope: Scope) -> None:
    """The SDK's SSE wait and ping interval: the request's keep-alive (0: none)."""
    seconds = keepalive_seconds(scope)
    if seconds is not None:
        wanted = seconds or math.inf
        if wanted != modern._SSE_PING_INTERVAL:
            modern._SSE_PING_INTERVAL = wanted
