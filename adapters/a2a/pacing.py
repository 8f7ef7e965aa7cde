"""A streamed A2A request's run waits for its stream (:mod:`agenthost.adapters.handoffs`).

The run's events go through the SDK's queues (the executor's queue, the
task's consumer, each subscriber's queue; each queued event there also
holds a copy of the whole task, history included) before the stream
sends them. Nothing in that path waits for the client: a stream that is
never read had its run go on to its end, its events piling up in those
queues. So the request handler gives a streamed ``SendStreamingMessage``
(JSON-RPC, HTTP+JSON and gRPC alike) a :class:`~agenthost.adapters.handoffs.HandOff`
in the call's state (:func:`reader`), and the executor's events go through
a :class:`PacedQueue` that waits for room in it before each one.

A request that is not streamed, a subscriber (``SubscribeToTask``) and a
task whose stream is gone do not hold the run back; neither does the task
store, which records every event as before.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from a2a.server.context import ServerCallContext
from a2a.server.events import Event, EventQueue

from agenthost.adapters.handoffs import HandOff, read

HAND_OFF = "agenthost.a2a.hand_off"
"""Call-state key: the streamed request's hand-off between its run and its stream."""

MAX_ITEMS = 2
"""Events handed and not yet sent past which the run waits: each one waiting in the
SDK's queues holds a copy of the task (its history may hold a large message)."""


def reader(events: AsyncIterator[Event], context: ServerCallContext) -> AsyncGenerator[Event, None]:
    """``events`` (a streamed request's) as the live reader its run waits for."""
    hand_off = HandOff(max_items=MAX_ITEMS)
    context.state[HAND_OFF] = hand_off
    return read(events, hand_off)


def paced(queue: EventQueue, context: ServerCallContext) -> EventQueue:
    """``queue``, waiting for the request's stream if it has one."""
    hand_off = context.state.get(HAND_OFF)
    return PacedQueue(queue, hand_off) if isinstance(hand_off, HandOff) else queue


class PacedQueue(EventQueue):
    """An executor's event queue whose events wait for room in a stream's hand-off."""

    def __init__(self, queue: EventQueue, hand_off: HandOff) -> None:
        self.queue = queue
        self.hand_off = hand_off

    async def enqueue_event(self, event: Event) -> None:
        await self.hand_off.room()
        self.hand_off.handed(event.ByteSize())
        await self.queue.enqueue_event(event)
