"""One conversation on every protocol: the shared conversation namespace.

Off by default: each protocol keeps its sessions in a store of its own, so
an A2A ``contextId`` and an MCP ``session_id`` that happen to be equal name
two conversations. ``AGENTHOST_SESSIONS=shared`` (or ``sessions: shared`` on
an agent in config; ``sessions: isolated`` opts one agent out) puts the
conversations of those agents in one store, the ``conversations``
namespace, that every protocol's adapter reads and writes: one id names
one conversation of that agent and that principal on every surface.

How: the host hands each adapter a :class:`SessionRouter` as its memory
manager. The key of a shared agent's session (``SessionKey(agent, id,
principal)``, the key every adapter already uses) goes to the common store;
every other key (stored responses, ACP runs and timelines, an isolated
agent's sessions) stays in the adapter's own store. Adapters need no
mapping of their own. Each message a protocol appends is stamped with that
protocol (``metadata.protocol``), the time, and an id if it has none, so the
history reads once, in order, whoever wrote each turn.

The id rule, for protocols that carry only UUIDs (IBM ACP's
``session_id``): a conversation's UUID is its id itself when the id is a
UUID in canonical form (``1b4e28ba-2fa1-11d2-883f-0016d3cca427``), else
``uuid5(CONVERSATION_NAMESPACE, id)`` (:func:`conversation_uuid`). The
common store keeps that UUID → id alias whenever a conversation with such an
id is written, so a UUID-only protocol reaches ``conv_…`` or ``support-42``
by its UUID.

Principals never meet: every key has its principal, aliases too. Agents
never share a conversation: the key has the agent's name.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from agenthost.agents import Conversation, MemoryManager, Message, SessionKey
from agenthost.agents.sessions import entry_lock

NAMESPACE = "conversations"
"""The common store's namespace."""

CONVERSATION_NAMESPACE = uuid.UUID("6f1d3b52-9a4e-5c0b-8e7a-2c5d1f0a9b34")
"""The uuid5 namespace of :func:`conversation_uuid` (fixed: part of the documented rule)."""

UUID_ONLY = frozenset({"acp"})
"""Protocols whose session ids are UUIDs: they name conversations by :func:`conversation_uuid`."""

_ALIAS = ":uuid"  # the SessionKey.agent of aliases (no agent name starts with ":")


def conversation_uuid(id: str) -> uuid.UUID:
    """The UUID that names conversation ``id`` on a protocol that carries only UUIDs."""
    try:
        parsed = uuid.UUID(id)
    except ValueError:
        parsed = None
    if parsed is not None and str(parsed) == id:
        return parsed
    return uuid.uuid5(CONVERSATION_NAMESPACE, id)


def shared_agents(
    agents: Sequence[str], default: str, overrides: Mapping[str, str]
) -> frozenset[str]:
    """The agents whose conversations are shared: ``sessions:`` of each, else ``default``."""
    return frozenset(a for a in agents if overrides.get(a, default) == "shared")


class SessionRouter:
    """One protocol's memory manager: shared agents' sessions in the common store.

    Everything but a shared agent's session goes to ``own`` unchanged, and
    what the adapter asks of its store besides sessions (cross-replica
    messages, leases, health) is ``own``'s.
    """

    def __init__(
        self,
        own: MemoryManager,
        common: MemoryManager,
        agents: frozenset[str],
        protocol: str,
    ) -> None:
        self.own = own
        self.common = common
        self.agents = agents
        self.protocol = protocol
        self.uuid_ids = protocol in UUID_ONLY

    @property
    def shared(self) -> bool:
        """Whether replicas share the adapter's store (not: whether sessions are shared)."""
        return bool(getattr(self.own, "shared", False))

    async def _route(self, key: SessionKey) -> tuple[MemoryManager, SessionKey]:
        if key.agent not in self.agents:
            return self.own, key
        if self.uuid_ids:
            alias = await self.common.get(SessionKey(_ALIAS, key.session, key.principal))
            target = alias.meta.get("id") if alias is not None else None
            if isinstance(target, str):
                return self.common, SessionKey(key.agent, target, key.principal)
        return self.common, key

    async def get(self, key: SessionKey) -> Conversation | None:
        store, key = await self._route(key)
        return await store.get(key)

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        store, key = await self._route(key)
        if store is self.own:
            await store.append(key, messages, meta=meta)
            return
        turn = store.append(key, [self._stamp(m) for m in messages], meta=meta)
        alias = conversation_uuid(key.session)
        if str(alias) == key.session:
            await turn
            return
        # Written with each turn, not once: the alias then lives as long as the
        # conversation under both LRU eviction and a TTL. On a shared store (Redis)
        # both writes go at once, so the alias adds no round trip of waiting.
        alias_key = SessionKey(_ALIAS, str(alias), key.principal)
        aliased = self.common.append(alias_key, (), meta={"id": key.session})
        if getattr(self.common, "shared", False):
            await asyncio.gather(turn, aliased)
        else:
            await turn
            await aliased

    def _stamp(self, message: Message) -> Message:
        if message.metadata is not None and "protocol" in message.metadata:
            return message
        metadata = {**(message.metadata or {}), "protocol": self.protocol, "at": time.time()}
        return message.model_copy(
            update={"metadata": metadata, "id": message.id or f"msg_{uuid.uuid4().hex}"}
        )

    async def delete(self, key: SessionKey) -> bool:
        store, key = await self._route(key)
        return await store.delete(key)

    @asynccontextmanager
    async def lock(self, key: SessionKey) -> AsyncIterator[None]:
        store, key = await self._route(key)
        async with entry_lock(store, key):
            yield

    # What adapters ask of their own store besides sessions --------------

    async def publish(self, topic: str, message: bytes) -> None:
        await self.own.publish(topic, message)  # type: ignore[attr-defined]

    def subscribe(self, topic: str) -> AsyncIterator[bytes]:
        iterator: AsyncIterator[bytes] = self.own.subscribe(topic)  # type: ignore[attr-defined]
        return iterator

    async def set_lease(self, name: str, seconds: float) -> None:
        await self.own.set_lease(name, seconds)  # type: ignore[attr-defined]

    async def has_lease(self, name: str) -> bool:
        held: bool = await self.own.has_lease(name)  # type: ignore[attr-defined]
        return held

    async def aclose(self) -> None:
        """Nothing: the host closes the stores it made."""
