"""A streamed chat's text events, built from pre-encoded parts, are the events
``sse_event(chunks.chunk(...))`` writes: same bytes, whatever the text."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from agenthost.adapters.openai.chat import _ChatChunks
from agenthost.adapters.openai.convert_chat import ChunkFactory
from agenthost.adapters.openai.http import sse_event

TEXTS = [
    "",
    "hi",
    'a "quoted" word',
    "line\nbreak\ttab\\",
    "ünïcødé ✓ 🚀",
    "\x00\x1f",
    '"content":""',
]


@pytest.mark.parametrize("include_usage", [False, True])
@pytest.mark.parametrize("model", ["echo", 'odd"content":""name'])
def test_text_events_are_the_chunks_events(include_usage: bool, model: str) -> None:
    chunks = ChunkFactory(id="chatcmpl-1", created=1, model=model, include_usage=include_usage)
    consumer = _ChatChunks(model, chunks)
    for text in TEXTS:
        (event,) = asyncio.run(consumer.on_text(text))
        assert event == sse_event(chunks.chunk({"content": text}))
        body = orjson.loads(event.removeprefix(b"data: "))
        assert body["choices"][0]["delta"] == {"content": text}
        assert body["model"] == model
