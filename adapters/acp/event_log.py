"""A run's event log: a list of JSON events while it grows, one deflated blob once settled.

A sync run of a paragraph answer logs ~54 events (one ``message.part`` per
streamed word), ~9.5 KB of JSON as separate ``bytes`` objects. A settled
run's log changes no more (until the run is resumed), so it is packed:
the events joined by newlines (compact JSON never holds a raw newline: it is
escaped inside strings), each run of text deltas as one line of their
lengths and their joined text, deflated with a preset dictionary of the
events' JSON skeleton, ~0.45 KB (``bench/protocol_sessions.py``). Reading a packed
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
# A streamed text delta's event, around its content (a JSON string's inside: it holds
# no raw quote, newline or control byte, so these bounds are the content's own).
_PART_HEAD = b'{"type":"message.part","part":{"name":null,"content_type":"text/plain","content":"'
_PART_TAIL = b'","content_encoding":"plain","content_url":null,"metadata":null}}'
_TEXTS = b"\x01"  # starts a line of consecutive deltas (an event's line starts with "{")


def _squeeze(events: list[bytes]) -> list[bytes]:
    """Each run of consecutive text deltas as one line: ``\x01<their lengths>\x01<their
    contents joined>``. Joined, the text is the one the later ``message.completed`` and
    ``run.completed`` events repeat, which deflate then finds whole: a paragraph's log
    packs to ~440 bytes instead of ~600 (``bench/protocol_sessions.py``)."""
    lines: list[bytes] = []
    texts: list[bytes] = []
    head, tail = len(_PART_HEAD), -len(_PART_TAIL)
    for event in events:
        if event.startswith(_PART_HEAD) and event.endswith(_PART_TAIL):
            texts.append(event[head:tail])
            continue
        if texts:
            lines.append(_texts_line(texts))
            texts = []
        lines.append(event)
    if texts:
        lines.append(_texts_line(texts))
    return lines


def _texts_line(texts: list[bytes]) -> bytes:
    lengths = b",".join(b"%d" % len(text) for text in texts)
    return _TEXTS + lengths + _TEXTS + b"".join(texts)


def _expand(lines: list[bytes]) -> list[bytes]:
    """The events :func:`_squeeze` gave ``lines`` for, byte for byte (a log packed before
    it has no such line: it reads as it is)."""
    events = []
    for line in lines:
        if not line.startswith(_TEXTS):
            events.append(line)
            continue
        _, lengths, joined = line.split(_TEXTS, 2)
        start = 0
        for length in lengths.split(b","):
            end = start + int(length)
            events.append(_PART_HEAD + joined[start:end] + _PART_TAIL)
            start = end
    return events


def _deflate(events: list[bytes]) -> bytes:
    deflate = zlib.compressobj(_LEVEL, zdict=_SKELETON)
    return deflate.compress(_SEPARATOR.join(_squeeze(events))) + deflate.flush()


def _inflate(data: bytes) -> list[bytes]:
    inflate = zlib.decompressobj(zdict=_SKELETON)
    return _expand((inflate.decompress(data) + inflate.flush()).split(_SEPARATOR))


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
        log = cls(_inflate(packed) if packed else ())
        if packed:
            log._events, log._packed = None, packed
        return log

    @property
    def packed_bytes(self) -> bytes:
        """The log deflated (b"" when empty), packed or not: what a shared snapshot keeps."""
        if self._events is None:
            return self._packed
        return _deflate(self._events) if self._events else b""

    def append(self, event: bytes) -> None:
        self._unpacked().append(event)
        self._count += 1
        self.json_bytes += len(event)

    def __len__(self) -> int:
        return self._count

    def since(self, start: int) -> list[bytes]:
        """The events from index ``start`` on."""
        if self._events is None:  # read without unpacking: a settled log stays packed
            return _inflate(self._packed)[start:]
        return self._events[start:]

    def last(self) -> bytes:
        """The last event (the log is not empty)."""
        if self._events is None:
            return _inflate(self._packed)[-1]
        return self._events[-1]

    def json_array(self) -> bytes:
        """The events as one JSON array."""
        events = _inflate(self._packed) if self._events is None else self._events
        return b"[" + b",".join(events) + b"]"

    @property
    def packed(self) -> bool:
        return self._events is None

    def pack(self) -> None:
        """Hold the events as one deflated blob (until the next :meth:`append`)."""
        if self._events is not None and self._events:
            self._packed = _deflate(self._events)
            self._events = None

    def _unpacked(self) -> list[bytes]:
        if self._events is None:
            self._events = _inflate(self._packed)
            self._packed = b""
        return self._events
