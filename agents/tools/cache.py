"""A bounded cache of tool results: least recently used out first, entries expire.

The key is the tool's name and its *validated* input in canonical JSON, so
``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` (or ``"1"`` coerced to ``1``)
hit the same entry, and nothing else — retry settings, the call id, the
cancellation scope — takes part in it. Only successful results are cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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

    @staticmethod
    def key(tool: str, arguments: Mapping[str, Any]) -> bytes:
        encoded = orjson.dumps(arguments, default=_jsonable, option=orjson.OPT_SORT_KEYS)
        return tool.encode() + b"\0" + encoded

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
