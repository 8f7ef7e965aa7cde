"""A streamed response's text deltas, built from a template encoded once, are the events
the event numbering makes field by field: same bytes and sequence numbers, whatever the
text, the item, the encoder (SSE or WebSocket JSON) and the events left out."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agenthost.adapters.openai.http import sse_event
from agenthost.adapters.openai.responses_stream import EventEncoder, _Events
from agenthost.adapters.openai.websocket import ws_event

TEXTS = [
    "",
    "hi",
    'a "quoted" word',
    "line\nbreak\ttab\\",
    "ünïcødé ✓ 🚀",
    "\x00\x1f",
    '"delta":"agenthost:template-delta"',
    '"sequence_number":0',
]
WHERE = [
    {"item_id": "msg_0a1b", "output_index": 0, "content_index": 0},
    {"item_id": 'msg_"sequence_number":0', "output_index": 12, "content_index": 0},
]


def _reference(skip: int | None, encode: EventEncoder, where: dict[str, Any]) -> list[bytes]:
    events = _Events(skip, encode)
    events("response.created", response={})
    delta = "response.output_text.delta"
    return [events(delta, **where, delta=text, logprobs=[]) for text in TEXTS]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("encode", [sse_event, ws_event], ids=["sse", "websocket"])
@pytest.mark.parametrize("skip", [None, 0, 3])
def test_text_deltas_are_the_events(
    skip: int | None, encode: EventEncoder, where: dict[str, Any]
) -> None:
    events = _Events(skip, encode)
    events("response.created", response={})
    deltas = events.text_deltas(where)
    made = [deltas(text) for text in TEXTS]
    assert made == _reference(skip, encode, where)
    assert events.sequence == 1 + len(TEXTS)
    last = orjson.loads(made[-1].rpartition(b"data: ")[2])
    assert last["sequence_number"] == len(TEXTS)
    assert last["delta"] == TEXTS[-1]
