"""Pure mapping between A2A parts and the runtime's messages and results.

A2A's unified ``Part`` holds text, data (a JSON value), inline bytes
(``raw``) or a URL. Text goes to the agent as it is, data as JSON text;
files only when they are images, which chat models take: any other file
is refused with a clear error.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from a2a.types import Part
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from agenthost.adapters.body_limits import off_loop
from agenthost.agents import DataPart, FilePart, Message, RunResult, TextPart
from agenthost.agents import Part as AgentPart

IMAGE_TYPES = ("image/",)


def from_part(part: Part) -> AgentPart:
    """One A2A part as a runtime part; refuses what no chat model can take."""
    kind = part.WhichOneof("content")
    if kind == "text":
        return TextPart(text=part.text)
    if kind == "data":
        # As JSON text: every model (and every agent reading ``Message.text``) sees it.
        try:
            value = MessageToDict(part.data)
        except ValueError:  # NaN or ±Infinity, which JSON has no number for (gRPC allows them)
            raise InvalidParamsError("a data part holds NaN or Infinity: not JSON") from None
        return TextPart(text=orjson.dumps(_whole_numbers(value)).decode())
    if kind in ("raw", "url"):
        media_type = part.media_type or ""
        if not media_type.startswith(IMAGE_TYPES):
            raise ContentTypeNotSupportedError(
                f"file parts of type {media_type or 'unknown'!r} are not supported: "
                "send text, data, or an image"
            )
        if kind == "url":
            return FilePart(url=part.url, mime_type=media_type, name=part.filename or None)
        data = base64.b64encode(part.raw).decode()
        return FilePart(data=data, mime_type=media_type, name=part.filename or None)
    raise InvalidParamsError("a message part must hold text, data, raw bytes or a URL")


def from_parts(parts: Iterable[Part]) -> list[AgentPart]:
    """A message's parts; an empty message is invalid."""
    converted = [from_part(p) for p in parts]
    if not converted:
        raise InvalidParamsError("the message has no parts")
    return converted


async def from_parts_off_loop(parts: Sequence[Part]) -> list[AgentPart]:
    """:func:`from_parts`, in the body worker pool when the parts are large (a data part's
    conversion costs ~1 µs a value: :mod:`agenthost.adapters.body_limits`)."""
    size = sum(part.ByteSize() for part in parts)
    return await off_loop(size, from_parts, parts)


def to_part(part: AgentPart) -> Part | None:
    """A runtime output part as an A2A part (None for tool calls and results)."""
    if isinstance(part, TextPart):
        return Part(text=part.text)
    if isinstance(part, DataPart):
        return Part(data=_value(part.data), media_type=part.mime_type)
    if isinstance(part, FilePart):
        common: dict[str, Any] = {
            "media_type": part.mime_type or "",
            "filename": part.name or "",
        }
        if part.url:
            return Part(url=part.url, **common)
        return Part(raw=base64.b64decode(part.data or ""), **common)
    return None


def output_parts(result: RunResult) -> list[Part]:
    """The non-text parts of the run's final answer (data, files).

    The text is streamed as it is generated; these come whole at the end.
    """
    final = _final_answer(result)
    if final is None:
        return []
    parts = (to_part(p) for p in final.parts if not isinstance(p, TextPart))
    return [p for p in parts if p is not None]


def _final_answer(result: RunResult) -> Message | None:
    for message in reversed(result.new_messages):
        if message.role == "assistant":
            return message
    return None


def _whole_numbers(value: Any) -> Any:
    """Protobuf JSON numbers are all doubles: give 42.0 back as 42."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return value


def _value(data: Any) -> Value:
    return ParseDict(data, Value())
