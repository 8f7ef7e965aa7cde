"""``echo``: a deterministic model with no network, for demos and tests.

It answers with the text of the last user message, unchanged (an empty
answer when there is none). Streamed, the answer comes word by word (each
chunk is one word with the whitespace that follows it). Usage counts
whitespace-separated words: every input message's words as input tokens,
the answer's words as output tokens. It reads text only and never calls a
tool: file parts and a forced ``tool_choice`` are refused (``UserError``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from agenthost.agents.messages import Message, last_user_text
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    count_words,
    refuse_files,
    refuse_forced_tools,
)
from agenthost.agents.results import TextDelta, Usage

WORD_CHUNKS = re.compile(r"\s*\S+\s*")


class EchoModel(BaseChatModel):
    """Replies with the last user message."""

    name = "echo"

    async def request(self, request: ModelRequest) -> ModelResponse:
        return word_response(request, _echo(request))

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        return stream_words(request, _echo(request))


def _echo(request: ModelRequest) -> Message:
    # What echo cannot honour is refused (a 400), never answered with "".
    refuse_files(request, "echo")
    refuse_forced_tools(request, "echo")
    return Message.assistant(last_user_text(request.messages) or "")


def word_response(request: ModelRequest, message: Message) -> ModelResponse:
    """``message`` as a response whose usage counts whitespace-separated words."""
    usage = Usage(count_words(request.messages), len(message.text.split()), 1)
    return ModelResponse(message, usage)


async def stream_words(request: ModelRequest, message: Message) -> AsyncIterator[ModelStreamEvent]:
    """Streams ``message``'s text word by word, then :func:`word_response`."""
    # finditer, not findall: a list of every word of a 4 MiB text is ~40 MB held
    # while the stream waits for a slow client.
    for match in WORD_CHUNKS.finditer(message.text):
        yield TextDelta(match.group())
    yield word_response(request, message)
