"""The unified message types every protocol adapter maps to and from.

A message is a role plus a list of content parts. Inputs in any of the
accepted shapes (a string, one message, or a mixed list) are normalised into
``list[Message]`` by :func:`to_messages` before an agent sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Part):
    """Plain text."""

    kind: Literal["text"] = "text"
    text: str


class DataPart(_Part):
    """Structured data (a JSON value)."""

    kind: Literal["data"] = "data"
    data: Any
    mime_type: str = "application/json"


class FilePart(_Part):
    """A file, given by URL or inline base64 bytes."""

    kind: Literal["file"] = "file"
    url: str | None = None
    data: str | None = None
    mime_type: str | None = None
    name: str | None = None


class ToolCallPart(_Part):
    """The model asks for a tool to be run; ``arguments`` is the raw JSON text."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str = "{}"


class ToolResultPart(_Part):
    """The result of one tool call, sent back to the model."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False


Part = Annotated[
    TextPart | DataPart | FilePart | ToolCallPart | ToolResultPart,
    Field(discriminator="kind"),
]


PART_SEPARATOR = "\n\n"
"""What stands between two parts of a message read as one text."""


class Message(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    parts: list[Part]
    name: str | None = None
    # The protocol's id for this message when it has one (A2A ``messageId``),
    # so that an agent can tell messages apart or refer to one.
    id: str | None = None
    # Where the message came from, as JSON values: a shared conversation
    # records each turn's protocol here (``{"protocol": "a2a"}``).
    metadata: dict[str, Any] | None = None

    # The text part goes in as a dict, validated with the message in one call: a
    # ``TextPart(...)`` first would be a second validation (~2x the cost).
    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", parts=[_text_part(text)])

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", parts=[_text_part(text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(role="assistant", parts=[_text_part(text)])

    @property
    def text(self) -> str:
        """The text parts, a blank line between two (data parts are not text).

        Parts are separate pieces (a prompt and a file, two paragraphs), so
        they are never glued together; a model's answer is one text part.
        """
        parts = self.parts
        if len(parts) == 1:  # the common case, read several times a turn
            part = parts[0]
            return part.text if isinstance(part, TextPart) else ""
        return PART_SEPARATOR.join(p.text for p in parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


def _text_part(text: str) -> Any:
    """A text part as :class:`Message` validates it (into a :class:`TextPart`)."""
    return {"kind": "text", "text": text}


MessageInput = str | Message | Sequence[str | Message]


def to_messages(value: MessageInput) -> list[Message]:
    """Normalise a run input: a string is a user message; lists may mix both."""
    if isinstance(value, str):
        return [Message.user(value)]
    if isinstance(value, Message):
        return [value]
    return [Message.user(item) if isinstance(item, str) else item for item in value]


def last_user_text(messages: Sequence[Message]) -> str | None:
    """The text of the last user message, or None when there is none."""
    for message in reversed(messages):
        if message.role == "user":
            return message.text
    return None
