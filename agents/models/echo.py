"""``echo``: a deterministic model with no network, for demos and tests.

It answers with the text of the last user message, unchanged (an empty
answer when there is none). Streamed, the answer comes word by word (each
chunk is one word with the whitespace that follows it). Usage counts
whitespace-separated words: every input message's words as input tokens,
the answer's words as output tokens.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from agents.messages import Message, last_user_text
from agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    count_words,
)
from agents.results import TextDelta, Usage

WORD_CHUNKS = re.compile(r"\s*\S+\s*")


class EchoModel(BaseChatModel):
    """Replies with the last user message."""

    name = "echo"

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._response(request, last_user_text(request.messages) or "")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        text = last_user_text(request.messages) or ""
        for chunk in WORD_CHUNKS.findall(text):
            yield TextDelta(chunk)
        yield self._response(request, text)

    @staticmethod
    def _response(request: ModelRequest, text: str) -> ModelResponse:
        usage = Usage(
            input_tokens=count_words(request.messages),
            output_tokens=len(text.split()),
            requests=1,
        )
        return ModelResponse(Message.assistant(text), usage)
