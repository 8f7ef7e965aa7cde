"""The one compact encoding of a stored message, shared by every session store.

A message is kept as its JSON (UTF-8 bytes) with ``null`` fields left out:
every field that can be ``None`` defaults to ``None``, so decoding gives back
an equal :class:`~agenthost.agents.messages.Message`. The in-process LRU
(:mod:`agenthost.app.memory`) keeps these bytes and Redis
(:mod:`agenthost.app.redis_memory`) stores them, one list element each: a
live pydantic ``Message`` with its parts costs ~1.1 KiB of Python objects,
its encoding a few hundred bytes (``bench/protocol_sessions.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import TypeAdapter

from agenthost.agents.messages import Message

_SERIALIZER = Message.__pydantic_serializer__
_MESSAGES = TypeAdapter(list[Message])


def encode_message(message: Message) -> bytes:
    """``message`` as compact JSON bytes, ``null`` fields left out."""
    return _SERIALIZER.to_json(message, exclude_none=True)


def decode_messages(raws: Iterable[bytes]) -> list[Message]:
    """Every message of ``raws`` (encoded by :func:`encode_message`), in order.

    One validation of the joined JSON array: ~25 % less CPU than one
    ``model_validate_json`` per message.
    """
    return _MESSAGES.validate_json(b"[" + b",".join(raws) + b"]")
