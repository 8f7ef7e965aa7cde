"""A run's event log: a list of JSON events while it grows, one deflated blob once settled.

A sync run of a paragraph answer logs ~54 events (one ``message.part`` per
streamed word), ~9.5 KB of JSON as separate ``bytes`` objects. A settled
run's log changes no more (until the run is resumed), so it is packed:
the events joined by newlines (compact JSON never holds a raw newline: it is
escaped inside strings), deflated with a preset dictionary of the events'
JSON skeleton, ~0.5 KB (``bench/protocol_sessions.py``). Reading a packed
log inflates it; appending to one (a resumed or cancelled run) unpacks it
first. :attr:`EventLog.json_bytes` stays the size of the events as JSON,
packed or not: the run store's byte budget counts that.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

# What every run's events repeat (the keys and constant values of acp-sdk's
# event models, as they serialise), so that deflate spends its bytes on the
# ids, times and texts only.
_SKELETON = (
    b'{"type":"message.part","part":{"name":null,"content_type":"text/plain","content":"'
    b' the ","content_encoding":"plain","content_url":null,"metadata":null}}\n'
    b'{"type":"message.created","message":{"role":"agent/","parts":[],"created_at":"'
    b'","completed_at":null}}\n'
    b'{"type":"message.completed","message":{"role":"agent/","parts":[{"name":null,'
    b'"content_type":"text/plain","content":"","content_encoding":"plain",'
    b'"content_url":null,"metadata":null}],"created_at":"","completed_at":""}}\n'
    b'{"type":"run.awaiting","run":{"run_id":"","agent_name":"","session_id":"",'
    b'"status":"awaiting","await_request":{"type":"message","message":{"role":"agent/",'
    b'"parts":[]}},"output":[],"error":null,"created_at":"","finished_at":null}}\n'
    b'{"type":"run.failed","run":{"status":"failed","error":{"code":"server_error","message":"'
    b'","data":null},"output":[],"finished_at":"2026-'
    b'{"type":"run.cancelled","run":{"status":"cancelled","await_request":null,"output":[],'
    b'"error":null,"created_at":"","finished_at":"2026-'
    b'{"type":"run.completed","run":{"run_id":"","agent_name":"","session_id":"",'
    b'"status":"completed","await_request":null,"output":[{"role":"agent/","parts":[{"name":'
    b'null,"content_type":"text/plain","content":"","content_encoding":"plain","content_url":'
    b'null,"metadata":null}],"created_at":"","completed_at":""}],"error":null,"created_at":'
    b'"","finished_at":"2026-'
    b'{"type":"run.in-progress","run":{"run_id":"","agent_name":"","session_id":"",'
    b'"status":"in-progress","await_request":null,"output":[],"error":null,"created_at":'
    b'"2026-","finished_at":null}}\n'
    b'{"type":"run.created","run":{"run_id":"","agent_name":"","session_id":"",'
    b'"status":"created","await_request":null,"output":[],"error":null,"created_at":"2026-'
    b'","finished_at":null}}\n'
)
_SEPARATOR = b"\n"
_LEVEL = 3  # a paragraph's log: 601 bytes in ~34 µs; level 6 571 bytes in ~80 µs


def _deflate(data: bytes) -> bytes:
    deflate = zlib.compressobj(_LEVEL, zdict=_SKELETON)
    return deflate.compress(data) + deflate.flush()


def _inflate(data: bytes) -> bytes:
    inflate = zlib.decompressobj(zdict=_SKELETON)
    return inflate.decompress(data) + inflate.flush()


class EventLog:
    """A run's events, each one JSON object (UTF-8 bytes), in order."""

    __slots__ = ("_count", "_events", "_packed", "json_bytes")

    def __init__(self, events: Iterable[bytes] = ()) -> None:
        self._events: list[bytes] | None = list(events)
        self._packed = b""
        self._count = len(self._events)
        self.json_bytes = sum(len(event) for event in self._events)
        """The events' size as JSON (packed or not)."""

    @classmethod
    def from_packed(cls, packed: bytes) -> EventLog:
        """The log that :attr:`packed_bytes` gave (it stays packed)."""
        log = cls(_inflate(packed).split(_SEPARATOR) if packed else ())
        if packed:
            log._events, log._packed = None, packed
        return log

    @property
    def packed_bytes(self) -> bytes:
        """The log deflated (b"" when empty), packed or not: what a shared snapshot keeps."""
        if self._events is None:
            return self._packed
        return _deflate(_SEPARATOR.join(self._events)) if self._events else b""

    def append(self, event: bytes) -> None:
        self._unpacked().append(event)
        self._count += 1
        self.json_bytes += len(event)

    def __len__(self) -> int:
        return self._count

    def since(self, start: int) -> list[bytes]:
        """The events from index ``start`` on."""
        if self._events is None:  # read without unpacking: a settled log stays packed
            return _inflate(self._packed).split(_SEPARATOR)[start:]
        return self._events[start:]

    def last(self) -> bytes:
        """The last event (the log is not empty)."""
        if self._events is None:
            return _inflate(self._packed).rpartition(_SEPARATOR)[2]
        return self._events[-1]

    def json_array(self) -> bytes:
        """The events as one JSON array."""
        if self._events is None:  # packed: its separators become commas
            return b"[" + _inflate(self._packed).replace(_SEPARATOR, b",") + b"]"
        return b"[" + b",".join(self._events) + b"]"

    @property
    def packed(self) -> bool:
        return self._events is None

    def pack(self) -> None:
        """Hold the events as one deflated blob (until the next :meth:`append`)."""
        if self._events is not None and self._events:
            self._packed = _deflate(_SEPARATOR.join(self._events))
            self._events = None

    def _unpacked(self) -> list[bytes]:
        if self._events is None:
            self._events = _inflate(self._packed).split(_SEPARATOR)
            self._packed = b""
        return self._events
