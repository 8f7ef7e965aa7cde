"""Session memory managers. The default is an in-process LRU with a TTL.

Each adapter gets its own instance (own capacity, TTL and namespace). The
LRU backend lives in one event loop: every operation completes without
awaiting, so it needs no lock. A Redis backend implements the same
:class:`~agents.sessions.MemoryManager` protocol
(:mod:`agenthost.app.redis_memory`), chosen by ``memory_factory``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from cachetools import TTLCache

from agenthost.agents import Conversation, MemoryManager, Message, SessionKey


class _CountingTTLCache(TTLCache[SessionKey, Conversation]):
    """A TTL + LRU cache that counts what it drops."""

    def __init__(self, maxsize: int, ttl: float, timer: Callable[[], float]) -> None:
        super().__init__(maxsize=maxsize, ttl=ttl, timer=timer)
        self.evicted = 0  # dropped for room
        self.expired = 0  # dropped for idleness

    def popitem(self) -> tuple[SessionKey, Conversation]:
        item = super().popitem()
        self.evicted += 1
        return item

    def expire(self, time: float | None = None) -> list[tuple[SessionKey, Conversation]]:
        items = super().expire(time)
        self.expired += len(items)
        return items


class LRUMemoryManager:
    """Bounded in-process sessions: least recently used go first, idle ones expire."""

    def __init__(
        self,
        namespace: str,
        *,
        max_sessions: int,
        ttl: float,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.namespace = namespace
        self._cache = _CountingTTLCache(maxsize=max_sessions, ttl=ttl, timer=timer)

    async def get(self, key: SessionKey) -> Conversation | None:
        conversation = self._cache.get(key)
        if conversation is not None:
            # The TTL is idle time: reading a session keeps it, as writing does.
            self._cache[key] = conversation
        return conversation

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        conversation = self._cache.get(key) or Conversation()
        conversation.messages.extend(messages)
        if meta:
            conversation.meta.update(meta)
        # Re-assigning refreshes the entry's TTL and LRU position.
        self._cache[key] = conversation

    async def delete(self, key: SessionKey) -> bool:
        return self._cache.pop(key, None) is not None

    async def aclose(self) -> None:
        self._cache.clear()

    @property
    def size(self) -> int:
        return len(self._cache)

    @property
    def evictions(self) -> int:
        """Sessions dropped for room or for idleness since start."""
        return self._cache.evicted + self._cache.expired


def memory_factory(
    max_sessions: int, ttl: float, *, store: str = "memory", timeout: float = 2.0
) -> Callable[[str], MemoryManager]:
    """``factory(namespace)`` → a new bounded store with these settings (one per adapter).

    ``store`` is ``memory`` (this process) or a Redis URL (:mod:`agenthost.app.redis_memory`).
    """
    if store != "memory":
        from agenthost.app.redis_memory import is_redis_url, redis_memory_factory

        if not is_redis_url(store):
            raise ValueError(f"unknown session store {store!r}: use 'memory' or a redis:// URL")
        return redis_memory_factory(store, ttl, timeout=timeout)

    def new_memory(namespace: str) -> LRUMemoryManager:
        return LRUMemoryManager(namespace, max_sessions=max_sessions, ttl=ttl)

    return new_memory
