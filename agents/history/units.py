"""Split a transcript into what a memory strategy may keep or drop as one piece.

The leading system messages (the agent's instructions) are the *head*: they
always stay. The rest is cut into *units*: a message, plus the ``tool``
messages answering its tool calls, so that dropping a unit never leaves a
tool call without its result or a result without its call (providers reject
both). Messages are compared by identity, never by value: two identical
"yes" messages are two messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenthost.agents.messages import Message


@dataclass(frozen=True, slots=True)
class Units:
    """A transcript as its fixed head and its droppable units, oldest first."""

    head: list[Message]
    units: list[list[Message]]

    def keep(self, first: int, *, extra_head: Sequence[Message] = ()) -> list[Message]:
        """The head (and ``extra_head``), then the units from index ``first`` on."""
        return [*self.head, *extra_head, *self.tail(first)]

    def tail(self, first: int) -> list[Message]:
        """The messages of the units from index ``first`` on."""
        return [m for unit in self.units[first:] for m in unit]

    def sizes(self) -> list[int]:
        return [len(unit) for unit in self.units]


def split_units(messages: Sequence[Message]) -> Units:
    """Cut ``messages`` into the system head and tool-safe units."""
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    units: list[list[Message]] = []
    for message in messages[start:]:
        # A tool result belongs with the call before it, wherever that is.
        if message.role == "tool" and units:
            units[-1].append(message)
        else:
            units.append([message])
    return Units(list(messages[:start]), units)


def same_messages(first: Sequence[Message], second: Sequence[Message]) -> bool:
    """The same message objects, in the same order (not merely equal texts)."""
    return len(first) == len(second) and all(a is b for a, b in zip(first, second, strict=True))
