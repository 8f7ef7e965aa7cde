"""A2A stream events as SSE frames, written once per handler event.

Both HTTP fronts (:mod:`~agenthost.adapters.a2a.rpc`,
:mod:`~agenthost.adapters.a2a.rest`) stream the SDK handler's events the
same way: each event as its ``StreamResponse`` JSON (built from the event
itself: no ``StreamResponse`` copy), in the binding's envelope, framed as
the SDK's ``ServerSentEvent`` frames them (``\\r\\n`` line ends); an error
ends the stream with one ``event: error`` frame.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message as Proto

EVENT_KEYS: Final[Mapping[type[Proto], str]] = {
    pb.Task: "task",
    pb.Message: "message",
    pb.TaskStatusUpdateEvent: "statusUpdate",
    pb.TaskArtifactUpdateEvent: "artifactUpdate",
}
"""A handler event's type → its field in ``StreamResponse`` (as JSON)."""


def stream_response(event: Proto) -> dict[str, Any]:
    """``MessageToDict(to_stream_response(event))`` without the copy into a ``StreamResponse``."""
    return {EVENT_KEYS[type(event)]: MessageToDict(event, preserving_proto_field_name=False)}


@dataclass(frozen=True, slots=True)
class Frames:
    """How one binding frames an event and the error that ends a stream."""

    event: Callable[[Proto], bytes]
    error: Callable[[Exception], bytes]


def error_frame(answer: dict[str, Any]) -> bytes:
    """An ``error`` event carrying ``answer``."""
    return b"event: error\r\ndata: " + orjson.dumps(answer) + b"\r\n\r\n"


async def frames(
    first: Proto | None, events: AsyncGenerator[Any], framing: Frames
) -> AsyncIterator[bytes]:
    """``first`` and then the rest of ``events`` as SSE frames; an error as the last frame."""
    try:
        if first is not None:
            yield framing.event(first)
        async for event in events:
            yield framing.event(event)
    except Exception as exc:
        yield framing.error(exc)
    finally:
        await events.aclose()  # the handler's clean-up, at once, when the client leaves
