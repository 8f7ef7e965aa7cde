"""How a streamed answer's pieces are gathered into artifact chunks (on the test's own clock).

The first chunk goes once :data:`FIRST_FLUSH` has passed (the first words show
at once), each later one once :data:`FLUSH_EVERY` has passed since the last
went: fewer events through the SDK's queues and task store. The chunks still
join to exactly the answer, the first with ``append: false``, ``lastChunk`` on
the last.
"""

from __future__ import annotations

import math

import pytest
from a2a.server.events.event_queue_v2 import EventQueueSource
from a2a.server.tasks import TaskUpdater
from a2a.types import TaskArtifactUpdateEvent

from agenthost.adapters.a2a.executor import FIRST_FLUSH, FLUSH_EVERY, _ArtifactChunks
from agenthost.agents import Message, RunResult

pytestmark = pytest.mark.anyio

PIECES = [f"w{i} " for i in range(40)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def streamed(gap: float) -> list[TaskArtifactUpdateEvent]:
    """The artifact chunks of :data:`PIECES` coming ``gap`` seconds apart."""
    clock = Clock()
    queue = EventQueueSource()
    chunks = _ArtifactChunks(TaskUpdater(queue, "t-1", "c-1"), "a-1", clock=clock)
    for number, piece in enumerate(PIECES, 1):
        clock.now = number * gap
        await chunks.add(piece)
    text = "".join(PIECES)
    await chunks.close(RunResult(text, [Message.assistant(text)]))
    events = [await queue.dequeue_event() for _ in range(chunks.sent)]
    await queue.close(immediate=True)
    assert all(isinstance(event, TaskArtifactUpdateEvent) for event in events)
    return events  # type: ignore[return-value]


def texts(events: list[TaskArtifactUpdateEvent]) -> list[str]:
    return ["".join(part.text for part in event.artifact.parts) for event in events]


async def test_the_first_piece_goes_alone_and_later_ones_are_gathered() -> None:
    gap = FIRST_FLUSH * 1.2  # slower than the first window, faster than the later ones
    events = await streamed(gap)
    sent = texts(events)
    assert sent[0] == PIECES[0], "the first piece waited for more"
    per_chunk = math.ceil(FLUSH_EVERY / gap)
    assert per_chunk > 1, "the later window gathers no more than the first"
    assert [len(chunk.split()) for chunk in sent[1:-1]] == [per_chunk] * (len(sent) - 2)
    assert "".join(sent) == "".join(PIECES)
    assert events[0].append is False and all(event.append for event in events[1:])
    assert events[-1].last_chunk and not any(event.last_chunk for event in events[:-1])


async def test_pieces_slower_than_the_window_go_one_chunk_each() -> None:
    events = await streamed(FLUSH_EVERY * 1.1)
    assert texts(events) == PIECES


async def test_pieces_that_come_at_once_are_one_chunk() -> None:
    events = await streamed(0.0)
    assert texts(events) == ["".join(PIECES)]
    assert events[0].append is False and events[0].last_chunk
