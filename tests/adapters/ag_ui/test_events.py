"""The per-token fast path of the text events is byte for byte the package's own encoding."""

from __future__ import annotations

import pytest
from ag_ui.core import TextMessageContentEvent

from agenthost.adapters.ag_ui.events import AGUIEvents, encode

pytestmark = pytest.mark.anyio

TEXTS = [
    "first",
    "hello ",
    'a "quoted" \\ word',
    "line\nbreak\ttab\x01",
    "é ü 日本 🎉",
    "</script>",
    "",
]


async def test_text_events_are_the_packages_encoding() -> None:
    events = AGUIEvents("a", "thread", "run")
    _, first = await events.on_text(TEXTS[0])
    assert events.message_id is not None
    expected = TextMessageContentEvent(message_id=events.message_id, delta=TEXTS[0])
    assert first == encode(expected)
    for text in TEXTS[1:-1]:
        [sent] = await events.on_text(text)
        assert sent == encode(TextMessageContentEvent(message_id=events.message_id, delta=text))
    assert await events.on_text("") == ()
