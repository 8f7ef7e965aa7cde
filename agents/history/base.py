"""The memory strategy protocol and what a strategy is given.

A strategy decides what the *model sees*; it never changes what the session
stores. The chat agent asks it before every model request, with the whole
transcript (instructions first) as it would otherwise be sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agenthost.agents.errors import UserError
from agenthost.agents.history.tokens import Counter
from agenthost.agents.history.units import Units
from agenthost.agents.messages import Message
from agenthost.agents.models.base import ChatModel
from agenthost.agents.results import Usage

if TYPE_CHECKING:
    from agenthost.agents.observe import UpstreamObserver


@dataclass(slots=True)
class HistoryContext:
    """The run a strategy works for: the agent's model and the session's notes."""

    model: ChatModel
    notes: dict[str, Any] | None = None
    """The session's notes (loaded once per run), or None for a run without a session."""
    usage: Usage = field(default_factory=Usage)
    """Tokens the strategy spent itself (a summary); added to the run's usage."""
    changed_notes: bool = False
    observer: UpstreamObserver | None = None
    """What watches the agent's model requests; a summary's request carries it too."""


class MemoryStrategy(Protocol):
    """Chooses the messages the model sees out of the whole transcript."""

    async def select(self, messages: Sequence[Message], context: HistoryContext) -> list[Message]:
        """What to send: the system head always, a tool call never without its result."""
        ...


class Unconstrained:
    """Everything, every time (the default)."""

    async def select(self, messages: Sequence[Message], context: HistoryContext) -> list[Message]:
        return list(messages)


async def fewest_to_drop(
    units: Units,
    counter: Counter,
    budget: int,
    head: Sequence[Message],
    *,
    start: int = 0,
) -> int:
    """The first unit to keep so that ``head`` and the units after it fit ``budget``.

    Drops the oldest units first and always keeps the last one (it holds the
    current input); a transcript that cannot fit even so is an error, never
    a loop. Binary search: a tokenizer is asked about log2(units) times.
    """

    async def fits(first: int) -> bool:
        return await counter.count([*head, *units.tail(first)], budget) <= budget

    last = max(len(units.units) - 1, start)
    if await fits(start):
        return start
    if not await fits(last):
        raise UserError(
            f"the instructions and the last message alone are more than the memory budget "
            f"of {budget} tokens; shorten the message or raise the agent's memory budget",
            param="messages",
        )
    low, high = start, last  # fits(high), not fits(low)
    while high - low > 1:
        middle = (low + high) // 2
        if await fits(middle):
            high = middle
        else:
            low = middle
    return high
