"""``summarize``: older turns condensed by a model into one summary.

Over budget, every unit but the newest ``keep_last`` messages is condensed
(with the previous summary, if any) into a summary that joins the
instructions. The summary is kept in the session's notes with how many
messages it covers and a digest of them (and in a bounded cache of the
strategy, for protocols without sessions), so the next turn starts from it
instead of summarising again; the stored transcript itself stays whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from cachetools import LRUCache

from agenthost.agents.history.base import HistoryContext, fewest_to_drop
from agenthost.agents.history.tokens import Counter
from agenthost.agents.history.units import Units, split_units
from agenthost.agents.messages import Message, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.models.base import ChatModel, ModelRequest
from agenthost.agents.options import ModelSettings

NOTE = "summary"
CACHED_SUMMARIES = 1024
SUMMARY_HEADING = "Summary of the earlier conversation:"
SUMMARIZE_INSTRUCTIONS = (
    "Summarise the conversation below for the assistant who continues it. Keep every "
    "fact, name, number, decision and open question; drop pleasantries. Answer with "
    "the summary only."
)


class Summarize:
    """Keeps the newest ``keep_last`` messages and a summary of the rest, when over budget."""

    def __init__(
        self,
        max_tokens: int,
        *,
        threshold: float = 0.75,
        keep_last: int = 6,
        model: ChatModel | None = None,
    ) -> None:
        if not 0 < threshold <= 1:
            raise ValueError("threshold is a fraction of max_tokens, in (0, 1]")
        self.max_tokens = max_tokens
        self.threshold = threshold
        self.keep_last = keep_last
        self.model = model
        """The summariser; None means the agent's own model."""
        # Summaries by the digest of the messages they cover: stateless protocols (Chat
        # Completions) and sessions without notes reuse them too. A hit needs the very
        # same messages, so it tells a caller nothing they did not send.
        self._cache: LRUCache[str, str] = LRUCache(maxsize=CACHED_SUMMARIES)

    @property
    def budget(self) -> int:
        return int(self.max_tokens * self.threshold)

    async def select(self, messages: Sequence[Message], context: HistoryContext) -> list[Message]:
        units = split_units(messages)
        counter = Counter(context.model)
        digests = _prefix_digests(units)
        summary, first = self._known_summary(digests, context.notes)
        head = _with_summary(units.head, summary)
        if await counter.count([*head, *units.tail(first)], self.budget) <= self.budget:
            return [*head, *units.tail(first)]
        # Condense what must go (and everything older than the newest keep_last messages).
        needed = await fewest_to_drop(units, counter, self.budget, head, start=first)
        kept = max(needed, _tail_start(units, self.keep_last))
        if kept > first:
            summary = await self._summarize(summary, units.units[first:kept], context)
            self._remember(units, kept, digests[kept - 1], summary, context)
            head = _with_summary(units.head, summary)
        # A summary longer than what it replaced: drop the oldest kept units too.
        kept = await fewest_to_drop(units, counter, self.budget, head, start=kept)
        return [*head, *units.tail(kept)]

    def _known_summary(
        self, digests: list[str], notes: dict[str, Any] | None
    ) -> tuple[str | None, int]:
        """A summary made before for a prefix of this conversation, and the first unit after it.

        The session's note first, then this process's cache; both are checked
        against the digest of the messages they cover, so a summary is never
        applied to a conversation it was not made from.
        """
        note = (notes or {}).get(NOTE)
        if isinstance(note, dict) and note.get("digest") in digests:
            return str(note.get("text", "")), digests.index(note["digest"]) + 1
        for first in range(len(digests), 0, -1):
            if (text := self._cache.get(digests[first - 1])) is not None:
                return text, first
        return None, 0

    def _remember(
        self, units: Units, kept: int, digest: str, summary: str, context: HistoryContext
    ) -> None:
        self._cache[digest] = summary
        if context.notes is None:
            return
        covered = sum(units.sizes()[:kept])
        context.notes[NOTE] = {"text": summary, "covers": covered, "digest": digest}
        context.changed_notes = True

    async def _summarize(
        self, previous: str | None, units: list[list[Message]], context: HistoryContext
    ) -> str:
        lines = [f"{SUMMARY_HEADING}\n{previous}\n"] if previous else []
        lines.append(transcript_text([m for unit in units for m in unit]))
        # Bounded: a summary must leave most of the budget to the conversation.
        settings = ModelSettings(max_tokens=max(32, self.budget // 4), temperature=0)
        prompt = (Message.system(SUMMARIZE_INSTRUCTIONS), Message.user("\n".join(lines)))
        request = ModelRequest(prompt, settings=settings, observer=context.observer)
        response = await (self.model or context.model).request(request)
        context.usage += response.usage
        return response.message.text.strip()


def _prefix_digests(units: Units) -> list[str]:
    """The digest of the conversation up to the end of each unit, in one pass."""
    hasher = hashlib.sha256()
    digests: list[str] = []
    for unit in units.units:
        for message in unit:
            hasher.update(message.model_dump_json().encode())
        digests.append(hasher.copy().hexdigest())
    return digests


def _tail_start(units: Units, keep_last: int) -> int:
    """The first unit of the newest ones holding at most ``keep_last`` messages (≥ 1 unit)."""
    sizes = units.sizes()
    first, kept = len(sizes) - 1, sizes[-1] if sizes else 0
    while first > 0 and kept + sizes[first - 1] <= keep_last:
        first -= 1
        kept += sizes[first]
    return max(first, 0)


def _with_summary(head: list[Message], summary: str | None) -> list[Message]:
    """The summary joins the instructions: one system message suits every chat template."""
    if summary is None:
        return head
    text = f"{SUMMARY_HEADING}\n{summary}"
    if not head:
        return [Message.system(text)]
    last = head[-1]
    return [*head[:-1], Message.system(f"{last.text}\n\n{text}")]


def transcript_text(messages: Sequence[Message]) -> str:
    """``messages`` as the plain text a summariser reads: one ``role: text`` line each,
    tool calls and results in brackets."""
    return "\n".join(_render(m) for m in messages)


def _render(message: Message) -> str:
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCallPart):
            pieces.append(f"[called {part.name}({part.arguments})]")
        elif isinstance(part, ToolResultPart):
            pieces.append(f"[{part.name} returned: {part.content}]")
    return f"{message.role}: {' '.join(pieces)}"
