"""Session memory managers. The default is an in-process LRU with a TTL,
bounded by count and by bytes (an estimate: the characters of every part
and of the metadata, plus a fixed overhead per message).

Each adapter gets its own instance (own capacity, TTL and namespace). The
LRU backend lives in one event loop: every operation completes without
awaiting, so it needs no lock. It keeps each message in the compact encoding
Redis stores (:mod:`agenthost.agents.message_codec`, a few hundred bytes
instead of ~1.1 KiB of live pydantic objects) and decodes a session's
messages on :meth:`LRUMemoryManager.get`. A Redis backend implements the same
:class:`~agents.sessions.MemoryManager` protocol
(:mod:`agenthost.app.redis_memory`), chosen by ``memory_factory``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from cachetools import TTLCache

from agenthost.agents import Conversation, MemoryManager, Message, SessionKey
from agenthost.agents.message_codec import decode_messages, encode_message
from agenthost.agents.messages import DataPart, FilePart, TextPart, ToolCallPart, ToolResultPart

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_MESSAGE_OVERHEAD = 200  # bytes a stored message and its parts cost besides their text


@dataclass(slots=True)
class _Entry:
    """A stored session: its messages encoded (:func:`encode_message`) and its metadata."""

    messages: list[bytes]
    meta: dict[str, Any]


class _CountingTTLCache(TTLCache[SessionKey, _Entry]):
    """A TTL + LRU cache that counts what it drops."""

    def __init__(
        self,
        maxsize: int,
        ttl: float,
        timer: Callable[[], float],
        dropped: Callable[[SessionKey], None] = lambda key: None,
    ) -> None:
        super().__init__(maxsize=maxsize, ttl=ttl, timer=timer)
        self.evicted = 0  # dropped for room
        self.expired = 0  # dropped for idleness
        self.dropped = dropped

    def popitem(self) -> tuple[SessionKey, _Entry]:
        item = super().popitem()
        self.evicted += 1
        self.dropped(item[0])
        return item

    def expire(self, time: float | None = None) -> list[tuple[SessionKey, _Entry]]:
        items = super().expire(time)
        self.expired += len(items)
        for key, _ in items:
            self.dropped(key)
        return items


class LRUMemoryManager:
    """Bounded in-process sessions: least recently used go first, idle ones expire.

    At most ``max_sessions`` sessions and about ``max_bytes`` bytes of them
    (:func:`message_bytes`): past either, the least recently used go. A
    session larger than the whole budget is not kept.
    """

    def __init__(
        self,
        namespace: str,
        *,
        max_sessions: int,
        ttl: float,
        timer: Callable[[], float] = time.monotonic,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.namespace = namespace
        self.max_bytes = max_bytes
        self.bytes = 0
        self._sizes: dict[SessionKey, tuple[int, int]] = {}  # key → (messages, meta) bytes
        self._cache = _CountingTTLCache(
            maxsize=max_sessions, ttl=ttl, timer=timer, dropped=self._forget
        )

    def _forget(self, key: SessionKey) -> None:
        messages, meta = self._sizes.pop(key, (0, 0))
        self.bytes -= messages + meta

    async def get(self, key: SessionKey) -> Conversation | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        # The TTL is idle time: reading a session keeps it, as writing does.
        self._cache[key] = entry
        return Conversation(decode_messages(entry.messages), entry.meta)

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        entry = self._cache.get(key) or _Entry([], {})
        entry.messages.extend(encode_message(m) for m in messages)
        if meta:
            entry.meta.update(meta)
        # Re-assigning refreshes the entry's TTL and LRU position.
        self._cache[key] = entry
        old_messages, old_meta = self._sizes.get(key, (0, 0))
        new_messages = old_messages + sum(message_bytes(m) for m in messages)
        new_meta = json_bytes(entry.meta) if meta else old_meta
        self._sizes[key] = (new_messages, new_meta)
        self.bytes += new_messages + new_meta - old_messages - old_meta
        if new_messages + new_meta > self.max_bytes:  # alone over budget: only it goes
            self._cache.pop(key, None)
            self._cache.evicted += 1
            self._forget(key)
        while self.bytes > self.max_bytes and self._cache:
            self._cache.popitem()  # least recently used first, this one last

    async def delete(self, key: SessionKey) -> bool:
        found = self._cache.pop(key, None) is not None
        self._forget(key)
        return found

    async def aclose(self) -> None:
        self._cache.clear()
        self._sizes.clear()
        self.bytes = 0

    @property
    def size(self) -> int:
        return len(self._cache)

    @property
    def evictions(self) -> int:
        """Sessions dropped for room or for idleness since start."""
        return self._cache.evicted + self._cache.expired


def message_bytes(message: Message) -> int:
    """A cheap estimate of what one stored message costs: its characters plus an overhead."""
    size = _MESSAGE_OVERHEAD
    for part in message.parts:
        if isinstance(part, TextPart):
            size += len(part.text)
        elif isinstance(part, ToolCallPart):
            size += len(part.arguments) + len(part.name) + len(part.id)
        elif isinstance(part, ToolResultPart):
            size += len(part.content) + len(part.name) + len(part.call_id)
        elif isinstance(part, FilePart):
            size += len(part.data or "") + len(part.url or "")
        elif isinstance(part, DataPart):
            size += len(orjson.dumps(part.data, default=str))
    return size


def json_bytes(value: Any) -> int:
    """About the length of ``value`` as JSON, without encoding its strings.

    ``orjson.dumps`` of a non-ASCII ``str`` leaves a UTF-8 copy cached on the
    string (CPython's ``PyUnicode_AsUTF8``): for a stored Responses turn (a
    deflated text held as latin-1) that copy was ~2.3x the text, kept as long
    as the session (``bench/protocol_sessions.py``).
    """
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return 2 + sum(len(str(k)) + 3 + json_bytes(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return 2 + sum(json_bytes(v) + 1 for v in value)
    return len(orjson.dumps(value, default=str))


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
