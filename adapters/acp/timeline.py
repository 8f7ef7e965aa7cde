"""A session's history in time order, across the agents it talked to.

Each agent keeps its own conversation of the session (what its next run
sees). Beside those, the session's timeline records the order of the runs:
each run that kept user or agent text adds one field to the timeline
entry's meta, named by the time (hex nanoseconds, so the names sort in time
order) and saying how many of those messages it kept with which agent
(``"2:<agent>"``). ``GET /sessions/{id}`` reads the messages themselves
from the agents' conversations (each run's are the last ones its agent
kept), so runs to ``a``, ``b``, ``a`` read back as ``a``, ``b``, ``a``
without a second copy of the conversation (``bench/protocol_sessions.py``).
A field is a write of its own (a Redis ``HSET``), so runs never read the
timeline and concurrent runs lose nothing.

Timelines written before kept a copy of every message, named after its
agent: such a timeline is read as it is, its copies first, and the runs
after it are added as fields. A session stored before timelines existed has
none and is listed agent by agent, as it was.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from agenthost.agents import MemoryManager, Message, SessionKey
from agenthost.agents.sessions import ManagedSession

TIMELINE = ":session"
"""The ``SessionKey.agent`` of timelines (no agent name starts with ``:``)."""


def timeline_key(session: str, principal: str) -> SessionKey:
    return SessionKey(TIMELINE, session, principal)


def shown(message: Message) -> bool:
    """Whether a message belongs in a session's history: user or agent text."""
    return message.role in ("user", "assistant") and bool(message.text)


class TimelineSession(ManagedSession):
    """An agent's session that also records its runs' order in the session's timeline."""

    __slots__ = ()

    async def append(self, messages: Sequence[Message]) -> None:
        await super().append(messages)
        count = sum(1 for m in messages if shown(m))
        if count:
            key = timeline_key(self.key.session, self.key.principal)
            run = {f"{time.time_ns():016x}": f"{count}:{self.key.agent}"}
            await self.manager.append(key, (), meta=run)


async def read_timeline(
    memory: MemoryManager, session: str, principal: str, agents: Sequence[str]
) -> list[Message] | None:
    """The session's messages in time order, to the agents in ``agents``; None if none kept."""
    conversation = await memory.get(timeline_key(session, principal))
    if conversation is None:
        return None
    # A timeline written before: a copy of each message, named after its agent.
    timeline = [m for m in conversation.messages if m.name in agents]
    runs = []
    for _, run in sorted(conversation.meta.items()):
        if isinstance(run, str):
            kept_count, _, agent = run.partition(":")
            runs.append((agent, int(kept_count)))
    kept: dict[str, list[Message | None]] = {}  # each agent's messages of the runs, in order
    for agent in {agent for agent, _ in runs if agent in agents}:
        stored = await memory.get(SessionKey(agent, session, principal))
        texts = [m for m in stored.messages if shown(m)] if stored is not None else []
        total = sum(count for name, count in runs if name == agent)
        # The runs kept the last ones (an evicted conversation may hold fewer).
        missing = max(0, total - len(texts))
        kept[agent] = [*([None] * missing), *texts[len(texts) - total + missing :]]
    for agent, count in runs:
        if agent in kept:
            taken, kept[agent] = kept[agent][:count], kept[agent][count:]
            timeline += [m.model_copy(update={"name": agent}) for m in taken if m is not None]
    return timeline
