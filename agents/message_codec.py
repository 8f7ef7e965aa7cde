"""The one compact encoding of a stored message, shared by every session store.

The in-process LRU (:mod:`agenthost.app.memory`) keeps these bytes and Redis
(:mod:`agenthost.app.redis_memory`) stores them, one list element each: a
live pydantic ``Message`` with its parts costs ~1.1 KiB of Python objects,
its encoding little more than its text (``bench/protocol_sessions.py``).

A message is a tag byte, a head byte and a body:

- the tag ``\\x01`` (no JSON text starts with it);
- the head: the role (bits 0-1, an index in :data:`ROLES`); bit 2 or 3 when
  the message's id is a UUID written as 32 lowercase hex digits or as the
  36 characters of ``str(uuid)``: then its 16 bytes follow the head; bit 4
  when the body is the general layout below;
- the body: the common message (one text part, no name, no metadata) is
  its text as UTF-8. Anything else is a JSON array ``[parts, name, id,
  metadata]``, trailing ``null`` left out (``id`` is ``null`` when it is in
  the head), each text part a JSON string and every other part an array
  of its kind's letter (:data:`_KINDS`) and its fields in order, trailing
  defaults left out.

A message that does not fit (a value orjson cannot write or would write
unlike pydantic, a lone surrogate in a text) is written in the format every
agenthost before session 16 wrote (:func:`encode_json`: compact pydantic
JSON, ``null`` fields left out, a :class:`DataPart`'s ``null`` data kept),
which starts with ``{``. Both decode, so sessions stored before read as
they are; an agenthost that predates this format cannot read it
(docs/deploy.md, upgrading). Decoding validates a session's messages in one
call, as it did from their joined JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from pydantic import TypeAdapter

from agenthost.agents.messages import (
    DataPart,
    FilePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

ROLES = ("system", "user", "assistant", "tool")
_ROLE_INDEX = {role: index for index, role in enumerate(ROLES)}
TAG = 0x01  # first byte of this format; the earlier one (JSON) starts with "{"
_HEX_ID = 0x04  # the id is 32 lowercase hex digits, its 16 bytes after the head
_UUID_ID = 0x08  # the id is str(UUID) (36 characters), its 16 bytes after the head
_GENERAL = 0x10  # the body is the JSON array, not one text part's UTF-8
_KINDS = {"d": "data", "f": "file", "c": "tool_call", "r": "tool_result"}

_SERIALIZER = Message.__pydantic_serializer__
_MESSAGES = TypeAdapter(list[Message])
_DASHES = (8, 13, 18, 23)
# What orjson would write its own way (pydantic's JSON differs) raises instead: such a
# message is written as the earlier format, exactly as before.
_JSON_ONLY = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def encode_message(message: Message) -> bytes:
    """``message`` in this module's compact format (or, if it does not fit, as JSON)."""
    try:
        return _compact(message)
    except (TypeError, UnicodeEncodeError):  # orjson.JSONEncodeError is a TypeError
        return encode_json(message)


def encode_json(message: Message) -> bytes:
    """``message`` as the earlier format: compact JSON, ``null`` fields left out."""
    if any(isinstance(part, DataPart) and part.data is None for part in message.parts):
        return _SERIALIZER.to_json(message)  # a null datum is required: keep it
    return _SERIALIZER.to_json(message, exclude_none=True)


def _compact(message: Message) -> bytes:
    head = _ROLE_INDEX[message.role]
    message_id = message.id
    packed_id = b""
    if message_id is not None:
        packed_id = _packed_uuid(message_id)
        if packed_id:
            head |= _UUID_ID if len(message_id) == 36 else _HEX_ID
            message_id = None
    parts = message.parts
    if (
        message_id is None
        and message.name is None
        and message.metadata is None
        and len(parts) == 1
        and type(parts[0]) is TextPart
    ):
        return bytes((TAG, head)) + packed_id + parts[0].text.encode()
    fields: list[Any] = [
        [_part_fields(part) for part in parts],
        message.name,
        message_id,
        message.metadata,
    ]
    while fields[-1] is None:
        fields.pop()
    return bytes((TAG, head | _GENERAL)) + packed_id + orjson.dumps(fields, option=_JSON_ONLY)


def _packed_uuid(message_id: str) -> bytes:
    """The 16 bytes of ``message_id`` if it is a UUID in a form written back exactly."""
    if len(message_id) == 36 and all(message_id[i] == "-" for i in _DASHES):
        digits = message_id.replace("-", "")
    elif len(message_id) == 32:
        digits = message_id
    else:
        return b""
    try:
        packed = bytes.fromhex(digits)
    except ValueError:
        return b""
    return packed if len(packed) == 16 and packed.hex() == digits else b""


def _part_fields(part: Any) -> Any:
    if type(part) is TextPart:
        return part.text
    if type(part) is DataPart:
        default = part.mime_type == "application/json"
        return ["d", part.data] if default else ["d", part.data, part.mime_type]
    fields: list[Any]
    if type(part) is FilePart:
        fields = ["f", part.url, part.data, part.mime_type, part.name]
    elif type(part) is ToolCallPart:
        fields = ["c", part.id, part.name, part.arguments]
        if part.arguments == "{}":
            fields.pop()
    elif type(part) is ToolResultPart:
        fields = ["r", part.call_id, part.name, part.content, part.is_error]
        if not part.is_error:
            fields.pop()
    else:  # a part kind this format does not know yet
        raise TypeError(f"no compact layout for {type(part).__name__}")
    while fields[-1] is None:
        fields.pop()
    return fields


def decode_messages(raws: Iterable[bytes]) -> list[Message]:
    """Every message of ``raws`` (encoded by :func:`encode_message`, or by an
    earlier agenthost as JSON), in order: one validation for them all."""
    fields: list[Any] = []
    old: list[bytes] = []
    for raw in raws:
        if raw[0] == TAG:
            fields.append(_message_fields(raw))
        else:  # the earlier format: JSON
            fields.append(len(old))
            old.append(raw)
    if old:  # sessions stored before: JSON, validated as such, in place
        olds = _MESSAGES.validate_json(b"[" + b",".join(old) + b"]")
        fields = [olds[item] if type(item) is int else item for item in fields]
    return _MESSAGES.validate_python(fields)


def _message_fields(raw: bytes) -> dict[str, Any]:
    head = raw[1]
    start = 2
    if head & (_HEX_ID | _UUID_ID):
        digits = raw[2:18].hex()
        if head & _UUID_ID:
            digits = f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
        start = 18
        if not head & _GENERAL:
            text = {"kind": "text", "text": raw[18:].decode()}
            return {"role": ROLES[head & 3], "parts": [text], "id": digits}
    elif not head & _GENERAL:
        return {"role": ROLES[head & 3], "parts": [{"kind": "text", "text": raw[2:].decode()}]}
    fields = orjson.loads(raw[start:])
    message = {"role": ROLES[head & 3], "parts": [_part(part) for part in fields[0]]}
    if start == 18:
        message["id"] = digits
    count = len(fields)
    if count > 1 and fields[1] is not None:
        message["name"] = fields[1]
    if count > 2 and fields[2] is not None:
        message["id"] = fields[2]
    if count > 3:
        message["metadata"] = fields[3]
    return message


def _part(fields: Any) -> dict[str, Any]:
    if type(fields) is str:
        return {"kind": "text", "text": fields}
    kind, *values = fields
    part = dict(zip(_FIELD_NAMES[kind], values, strict=False))
    part["kind"] = _KINDS[kind]
    return part


_FIELD_NAMES = {
    "d": ("data", "mime_type"),
    "f": ("url", "data", "mime_type", "name"),
    "c": ("id", "name", "arguments"),
    "r": ("call_id", "name", "content", "is_error"),
}
