"""Token counts for memory strategies: a cheap estimate, exact where the model can count.

A model that has a tokenizer implements :class:`TokenCounter` (the local
model does). Counting through it costs a call, so strategies estimate first
and ask the tokenizer only when the estimate is near the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agenthost.agents.messages import Message, TextPart, ToolCallPart, ToolResultPart

# Tokens a chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD = 4
# English text averages about four characters a token across common tokenizers.
CHARS_PER_TOKEN = 4


@runtime_checkable
class TokenCounter(Protocol):
    """A model that counts a transcript's tokens exactly, as it would see them."""

    async def count_tokens(self, messages: Sequence[Message]) -> int: ...


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A fast, tokenizer-free estimate of what ``messages`` cost."""
    return sum(_estimate(message) for message in messages)


def _estimate(message: Message) -> int:
    chars = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            chars += len(part.text)
        elif isinstance(part, ToolCallPart):
            chars += len(part.name) + len(part.arguments)
        elif isinstance(part, ToolResultPart):
            chars += len(part.content)
        else:  # data and files: their JSON form is what most providers send
            chars += len(part.model_dump_json())
    return MESSAGE_OVERHEAD + -(-chars // CHARS_PER_TOKEN)


class Counter:
    """Counts with the model's tokenizer when it has one, else estimates; one per selection."""

    def __init__(self, model: object) -> None:
        self._exact = model if isinstance(model, TokenCounter) else None
        self._engaged = False  # once exact, always exact: mixed counts would not compare

    @property
    def exact(self) -> bool:
        return self._exact is not None

    async def count(self, messages: Sequence[Message], budget: int) -> int:
        """The tokens of ``messages``; exact when it matters for ``budget``."""
        estimate = estimate_tokens(messages)
        # Far below the budget the estimate is enough (saves a tokenizer call a turn); the
        # margin covers text at one character a token (code, non-Latin scripts).
        if self._exact is None or (not self._engaged and estimate * CHARS_PER_TOKEN <= budget):
            return estimate
        self._engaged = True
        return await self._exact.count_tokens(messages)
