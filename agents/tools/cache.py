"""A bounded cache of tool results: least recently used out first, entries expire.

The key is the tool's name and its *validated* input in canonical JSON, so
``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` (or ``"1"`` coerced to ``1``)
hit the same entry, and nothing else — retry settings, the call id, the
cancellation scope — takes part in it. Only successful results are cached.
Concurrent calls with one key run the tool once: the others wait for its
result (and run themselves if it failed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from cachetools import TTLCache
from pydantic import BaseModel


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """How many results a tool keeps, and for how long (seconds)."""

    max_entries: int = 256
    ttl: float = 300.0


class ToolCache:
    """One tool's results: LRU with a time to live, with hit and miss counts."""

    def __init__(self, options: CacheOptions) -> None:
        self.options = options
        self._entries: TTLCache[bytes, str] = TTLCache(options.max_entries, options.ttl)
        self.hits = 0
        self.misses = 0
        self._running: dict[bytes, anyio.Event] = {}

    @staticmethod
    def key(tool: str, arguments: Mapping[str, Any]) -> bytes:
        encoded = orjson.dumps(arguments, default=_jsonable, option=orjson.OPT_SORT_KEYS)
        return tool.encode() + b"\0" + encoded

    @asynccontextmanager
    async def claim(self, key: bytes) -> AsyncIterator[str | None]:
        """The cached result, or None: then the caller runs the tool and ``put``s it.

        While a caller holds the claim, others with the same key wait for it.
        """
        while (running := self._running.get(key)) is not None:
            await running.wait()
        hit = self.get(key)
        if hit is not None:
            yield hit
            return
        done = self._running[key] = anyio.Event()
        try:
            yield None
        finally:
            del self._running[key]
            done.set()

    def get(self, key: bytes) -> str | None:
        value = self._entries.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: bytes, value: str) -> None:
        self._entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)
