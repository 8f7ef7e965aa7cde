"""The last SSE events of this process, so that a 2025-11-25 stream starts with a
priming event (an ``id`` and an empty ``data``) and its ``retry`` field.

The spec (2025-11-25, transports) wants each SSE stream to open with an
event id, so that a client whose connection drops can reconnect with
``Last-Event-ID`` instead of losing the call. The SDK sends one when it has
an event store; this one keeps the last ``capacity`` events in memory (a
reconnect to another replica, or after that many events, replays nothing).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import JSONRPCMessage


class RecentEvents(EventStore):
    """The last ``capacity`` events of every stream, in order."""

    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self._events: OrderedDict[int, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = next(self._ids)
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self.capacity:
            self._events.popitem(last=False)
        return str(event_id)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        try:
            last = int(last_event_id)
        except ValueError:
            return None
        found = self._events.get(last)
        if found is None:
            return None
        stream_id = found[0]
        later = [
            (event_id, message)
            for event_id, (stream, message) in self._events.items()
            if event_id > last and stream == stream_id and message is not None
        ]
        for event_id, message in later:
            await send_callback(EventMessage(message, str(event_id)))
        return stream_id
