"""A session's history in time order, across the agents it talked to.

Each agent keeps its own conversation of the session (what its next run
sees). Beside those, the adapter appends every run's user and agent text to
one more entry, the session's timeline, each message named after its agent:
``GET /sessions/{id}`` lists that, so runs to ``a``, ``b``, ``a`` read back
as ``a``, ``b``, ``a``. A session stored before timelines existed has none
and is listed agent by agent, as it was.
"""

from __future__ import annotations

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
    """An agent's session that also appends what it keeps to the session's timeline."""

    __slots__ = ()

    async def append(self, messages: Sequence[Message]) -> None:
        await super().append(messages)
        named = [m.model_copy(update={"name": self.key.agent}) for m in messages if shown(m)]
        if named:
            key = timeline_key(self.key.session, self.key.principal)
            await self.manager.append(key, named)


async def read_timeline(
    memory: MemoryManager, session: str, principal: str, agents: Sequence[str]
) -> list[Message] | None:
    """The session's messages in time order, to the agents in ``agents``; None if none kept."""
    conversation = await memory.get(timeline_key(session, principal))
    if conversation is None:
        return None
    return [m for m in conversation.messages if m.name in agents]
