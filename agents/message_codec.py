"""The compact encodings of a stored message, shared by every session store.

The in-process LRU (:mod:`agenthost.app.memory`) keeps :func:`encode_message`'s
bytes: a live pydantic ``Message`` with its parts costs ~1.1 KiB of Python
objects, its encoding little more than its text (``bench/protocol_sessions.py``).
Redis (:mod:`agenthost.app.redis_memory`) stores :func:`encode_json`'s, one
list element each: replicas of two versions share those lists during a
rolling upgrade, and every agenthost reads JSON. :func:`decode_messages`
reads both.

Most stored messages are a question or an answer: one text part, no name,
no metadata, perhaps an id. Such a message is written as

- the tag ``\\x01`` (no JSON text starts with it);
- a head byte: the role (bits 0-1, its index in :data:`ROLES`); bit 2 or 3
  when the id is a UUID written as 32 lowercase hex digits (A2A clients'
  ``messageId``) or as the 36 characters of ``str(uuid)``: its 16 bytes
  follow the head (another id makes the message JSON);
- the text, UTF-8.

Any other message is compact pydantic JSON with ``null`` fields left out
(:func:`encode_json`), as every agenthost before session 16 stored all of
them: messages stored before read as they are, and so does a session
holding both. An agenthost that predates the tagged format cannot read it,
which is why it never leaves the process. A positional layout of the other shapes (short
tags, defaults left out) saved ~30 % of their bytes but decoded 2.2x slower
than pydantic's one validation of their JSON (``bench/README.md``, session
16): not taken.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter

from agenthost.agents.messages import DataPart, Message, TextPart

ROLES = ("system", "user", "assistant", "tool")
_ROLE_INDEX = {role: index for index, role in enumerate(ROLES)}
TAG = 0x01  # first byte of a tagged message; JSON starts with "{"
_HEX_ID = 0x04  # the id is 32 lowercase hex digits: its 16 bytes follow the head
_UUID_ID = 0x08  # the id is str(UUID), 36 characters: its 16 bytes follow the head

_SERIALIZER = Message.__pydantic_serializer__
_MESSAGES = TypeAdapter(list[Message])
_DASHES = (8, 13, 18, 23)


def encode_message(message: Message) -> bytes:
    """``message`` tagged if it is one text part and at most a UUID id, else as JSON."""
    parts = message.parts
    if (
        len(parts) == 1
        and type(parts[0]) is TextPart
        and message.name is None
        and message.metadata is None
    ):
        head, packed_id = _ROLE_INDEX[message.role], b""
        if message.id is not None:
            packed_id = _packed_uuid(message.id)
            head |= _UUID_ID if len(message.id) == 36 else _HEX_ID
        if message.id is None or packed_id:
            try:
                return bytes((TAG, head)) + packed_id + parts[0].text.encode()
            except UnicodeEncodeError:  # a lone surrogate: as before (pydantic refuses it)
                pass
    return encode_json(message)


def encode_json(message: Message) -> bytes:
    """``message`` as every agenthost before session 16 stored it: compact
    pydantic JSON, ``null`` fields left out."""
    if any(isinstance(part, DataPart) and part.data is None for part in message.parts):
        return _SERIALIZER.to_json(message)  # a null datum is required: keep it
    return _SERIALIZER.to_json(message, exclude_none=True)


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


def decode_messages(raws: Iterable[bytes]) -> list[Message]:
    """Every message of ``raws`` (encoded by :func:`encode_message`, or by an
    earlier agenthost), in order: one validation for the JSON ones, one for
    the others."""
    fields: list[Any] = []  # a tagged message's fields, or the index of a JSON one
    append = fields.append
    jsons: list[bytes] = []
    for raw in raws:
        if raw[0] != TAG:
            append(len(jsons))
            jsons.append(raw)
            continue
        head = raw[1]
        if head < _HEX_ID:
            append({"role": ROLES[head], "parts": [{"kind": "text", "text": raw[2:].decode()}]})
            continue
        digits = raw[2:18].hex()
        if head & _UUID_ID:
            digits = f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
        text = {"kind": "text", "text": raw[18:].decode()}
        append({"role": ROLES[head & 3], "parts": [text], "id": digits})
    if not jsons:
        return _MESSAGES.validate_python(fields)
    decoded = _MESSAGES.validate_json(b"[" + b",".join(jsons) + b"]")
    if len(jsons) == len(fields):
        return decoded
    tagged = iter(_MESSAGES.validate_python([f for f in fields if type(f) is dict]))
    return [decoded[f] if type(f) is int else next(tagged) for f in fields]
