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
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from agenthost.agents import Conversation, MemoryManager, Message, SessionKey
from agenthost.agents.message_codec import decode_messages, encode_message
from agenthost.agents.messages import DataPart, FilePart, TextPart, ToolCallPart, ToolResultPart

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_MESSAGE_OVERHEAD = 200  # bytes a stored message and its parts cost besides their text


@dataclass(slots=True)
class _Entry:
    """A stored session: its messages encoded (:func:`encode_message`), its metadata,
    when it expires and what it costs (:func:`message_bytes` of its messages,
    :func:`json_bytes` of its metadata)."""

    messages: list[bytes] | tuple[()]  # () until the first message (meta-only entries)
    meta: dict[str, Any]
    expires: float = 0.0
    message_bytes: int = 0
    meta_bytes: int = 0


class LRUMemoryManager:
    """Bounded in-process sessions: least recently used go first, idle ones expire.

    At most ``max_sessions`` sessions and about ``max_bytes`` bytes of them
    (:func:`message_bytes`): past either, the least recently used go. A
    session larger than the whole budget is not kept.

    Every read and write refreshes a session's idle time and its place, so one
    ordered dict, least recently used first, is both the LRU order and the
    expiry order (a cachetools ``TTLCache`` kept four structures per key for
    that, ~0.4 KiB; ``bench/protocol_sessions.py``). As there, expired
    sessions are dropped when a session is written (a read of one misses).
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
        self.max_sessions = max_sessions
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.bytes = 0
        self.evicted = 0  # dropped for room
        self.expired = 0  # dropped for idleness
        self._timer = timer
        self._cache: OrderedDict[SessionKey, _Entry] = OrderedDict()

    def _live(self, key: SessionKey, now: float) -> _Entry | None:
        entry = self._cache.get(key)
        return entry if entry is not None and now < entry.expires else None

    def _store(self, key: SessionKey, entry: _Entry, now: float) -> None:
        """Put (or refresh) ``entry``: the most recent, idle from ``now``."""
        self._expire(now)
        cache = self._cache
        if key in cache:
            cache.move_to_end(key)
        else:
            while len(cache) >= self.max_sessions:
                self._drop_oldest()
        cache[key] = entry
        entry.expires = now + self.ttl

    def _expire(self, now: float) -> None:
        cache = self._cache
        while cache:
            key, entry = next(iter(cache.items()))
            if now < entry.expires:
                return
            del cache[key]
            self.bytes -= entry.message_bytes + entry.meta_bytes
            self.expired += 1

    def _drop_oldest(self) -> None:
        _, entry = self._cache.popitem(last=False)
        self.bytes -= entry.message_bytes + entry.meta_bytes
        self.evicted += 1

    async def get(self, key: SessionKey) -> Conversation | None:
        now = self._timer()
        entry = self._live(key, now)
        if entry is None:
            return None
        # The TTL is idle time: reading a session keeps it, as writing does.
        self._store(key, entry, now)
        messages = decode_messages(entry.messages) if entry.messages else []
        return Conversation(messages, entry.meta)

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        now = self._timer()
        entry = self._live(key, now) or _Entry((), {})
        if messages:
            if isinstance(entry.messages, tuple):
                entry.messages = []
            entry.messages.extend(encode_message(m) for m in messages)
        old = entry.message_bytes + entry.meta_bytes
        if meta:
            entry.meta_bytes += _meta_change(entry.meta, meta)
            entry.meta.update(meta)
        self._store(key, entry, now)
        entry.message_bytes += sum(message_bytes(m) for m in messages)
        self.bytes += entry.message_bytes + entry.meta_bytes - old
        if entry.message_bytes + entry.meta_bytes > self.max_bytes:  # alone over budget
            del self._cache[key]
            self.bytes -= entry.message_bytes + entry.meta_bytes
            self.evicted += 1
        while self.bytes > self.max_bytes and self._cache:
            self._drop_oldest()  # least recently used first, this one last

    async def delete(self, key: SessionKey) -> bool:
        entry = self._cache.get(key)
        if entry is None:
            return False
        if not self._timer() < entry.expires:
            return False  # expired: dropped (and counted) by the next write
        del self._cache[key]
        self.bytes -= entry.message_bytes + entry.meta_bytes
        return True

    async def aclose(self) -> None:
        self._cache.clear()
        self.bytes = 0

    @property
    def size(self) -> int:
        return len(self._cache)

    @property
    def evictions(self) -> int:
        """Sessions dropped for room or for idleness since start."""
        return self.evicted + self.expired


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


def _meta_change(meta: dict[str, Any], update: dict[str, Any]) -> int:
    """How :func:`json_bytes` of ``meta`` changes with ``update`` merged into it, without
    walking the fields it keeps (a Responses chain adds one field per turn)."""
    change = 0 if meta else 2
    for name, value in update.items():
        if name in meta:
            change -= json_bytes(meta[name])
        else:
            change += len(str(name)) + 3
        change += json_bytes(value)
    return change


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
