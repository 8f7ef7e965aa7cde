"""The trimming strategies: a sliding window of messages and a token budget."""

from __future__ import annotations

from collections.abc import Sequence

from agenthost.agents.errors import AgentError
from agenthost.agents.history.base import HistoryContext, fewest_to_drop
from agenthost.agents.history.tokens import Counter
from agenthost.agents.history.units import split_units
from agenthost.agents.messages import Message


class SlidingWindow:
    """The instructions and the last ``max_messages`` messages.

    The window moves a whole unit at a time, so it may hold fewer messages
    than ``max_messages`` rather than split a tool call from its result.
    """

    def __init__(self, max_messages: int) -> None:
        if max_messages < 1:
            raise ValueError("a sliding window holds at least one message")
        self.max_messages = max_messages

    async def select(self, messages: Sequence[Message], context: HistoryContext) -> list[Message]:
        units = split_units(messages)
        sizes = units.sizes()
        first, kept = len(sizes), 0
        while first > 0 and kept + sizes[first - 1] <= self.max_messages:
            first -= 1
            kept += sizes[first]
        if sizes and first == len(sizes):
            raise AgentError(
                f"a sliding window of {self.max_messages} messages cannot hold the last "
                f"{sizes[-1]} (a tool call and its results stay together); "
                "raise memory.max_messages"
            )
        return units.keep(first)


class TokenBudget:
    """The newest messages that fit ``threshold * max_tokens`` tokens, oldest dropped first.

    The threshold leaves room for the answer inside the model's context.
    """

    def __init__(self, max_tokens: int, threshold: float = 0.75) -> None:
        if not 0 < threshold <= 1:
            raise ValueError("threshold is a fraction of max_tokens, in (0, 1]")
        self.max_tokens = max_tokens
        self.threshold = threshold

    @property
    def budget(self) -> int:
        return int(self.max_tokens * self.threshold)

    async def select(self, messages: Sequence[Message], context: HistoryContext) -> list[Message]:
        units = split_units(messages)
        first = await fewest_to_drop(units, Counter(context.model), self.budget, units.head)
        return units.keep(first)
