"""Sessions: where a conversation's history lives between runs.

History is never kept on the (shared) agent object. A run is given a
:class:`Session`; the app's memory managers hand out sessions keyed by
``(agent, session id, principal)``: whoever called with another API key
never reaches the session. Sessions are append-only, so concurrent runs on one
session interleave whole turns and never corrupt each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agenthost.agents.messages import Message

ANONYMOUS = "anonymous"
"""The one principal when authentication is off."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """A session is scoped to an agent and to the principal that owns it.

    Never a bare session id: two API keys using the same session name get
    two sessions, so one can never read, continue or delete the other's.
    """

    agent: str
    session: str
    principal: str


@dataclass(slots=True)
class Conversation:
    """A stored session: its messages and protocol metadata (JSON values)."""

    messages: list[Message] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Session(Protocol):
    """What a run needs from a session."""

    async def load(self) -> list[Message]: ...

    async def append(self, messages: Sequence[Message]) -> None: ...


NOTES = "notes"
"""The conversation meta key under which a session keeps its notes."""


@runtime_checkable
class NotedSession(Protocol):
    """A session that also keeps notes about the conversation (a memory summary).

    Notes are JSON values; they never change the stored messages.
    """

    async def load_notes(self) -> dict[str, Any]: ...

    async def save_notes(self, notes: dict[str, Any]) -> None: ...


class MemoryManager(Protocol):
    """A bounded store of conversations; one instance per protocol adapter."""

    async def get(self, key: SessionKey) -> Conversation | None: ...

    async def append(
        self,
        key: SessionKey,
        messages: Sequence[Message],
        *,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Append messages (creating the conversation) and merge ``meta`` into it."""
        ...

    async def delete(self, key: SessionKey) -> bool: ...

    async def aclose(self) -> None: ...


def entry_lock(manager: MemoryManager, key: SessionKey) -> AbstractAsyncContextManager[Any]:
    """Hold ``key`` while reading and writing back one entry (a read-modify-write).

    A shared store (Redis) offers ``lock(key)`` across replicas; the
    in-process store needs none, as none of its operations yields.
    """
    lock = getattr(manager, "lock", None)
    return lock(key) if lock is not None else nullcontext()


class ManagedSession:
    """A :class:`Session` backed by a memory manager entry."""

    __slots__ = ("key", "manager")

    def __init__(self, manager: MemoryManager, key: SessionKey) -> None:
        self.manager = manager
        self.key = key

    async def load(self) -> list[Message]:
        conversation = await self.manager.get(self.key)
        return list(conversation.messages) if conversation else []

    async def append(self, messages: Sequence[Message]) -> None:
        await self.manager.append(self.key, messages)

    async def load_notes(self) -> dict[str, Any]:
        conversation = await self.manager.get(self.key)
        notes = conversation.meta.get(NOTES) if conversation else None
        return dict(notes) if isinstance(notes, dict) else {}

    async def save_notes(self, notes: dict[str, Any]) -> None:
        await self.manager.append(self.key, [], meta={NOTES: dict(notes)})


def conversation_of(session: Session | None) -> str | None:
    """The id the client gave ``session`` (a :class:`ManagedSession`'s), else None."""
    key = getattr(session, "key", None)
    return key.session if isinstance(key, SessionKey) else None


class InMemorySession:
    """A session that is just a list, for scripts and tests."""

    def __init__(self, messages: Sequence[Message] = ()) -> None:
        self.messages = list(messages)
        self.notes: dict[str, Any] = {}

    async def load(self) -> list[Message]:
        return list(self.messages)

    async def append(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)

    async def load_notes(self) -> dict[str, Any]:
        return dict(self.notes)

    async def save_notes(self, notes: dict[str, Any]) -> None:
        self.notes = dict(notes)
