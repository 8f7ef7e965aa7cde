"""The request bodies of the Messages API that this adapter reads (pydantic, parsed once).

Fields that change nothing here (``cache_control``, ``citations``,
``metadata``, ``service_tier``, beta fields) are accepted and
ignored, as clients such as Claude Code send them on every request; a block
or tool type that is not served is a 400 naming it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class TextBlock(_Model):
    type: Literal["text"]
    text: str


class Source(_Model):
    """Where an image's or a document's bytes are: ``base64``, ``url`` or ``text``
    (``file`` and ``content`` are read to be refused by name)."""

    type: Literal["base64", "url", "text", "file", "content"]
    media_type: str | None = None
    data: str | None = None
    url: str | None = None


class ImageBlock(_Model):
    type: Literal["image"]
    source: Source


class DocumentBlock(_Model):
    type: Literal["document"]
    source: Source
    title: str | None = None


class ToolUseBlock(_Model):
    type: Literal["tool_use"]
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    input: dict[str, Any]


class ToolResultBlock(_Model):
    type: Literal["tool_result"]
    tool_use_id: str = Field(min_length=1)
    content: (
        str | list[Annotated[TextBlock | ImageBlock | DocumentBlock, Field(discriminator="type")]]
    ) = ""
    is_error: bool = False


class ThinkingBlock(_Model):
    """A reasoning block a client sends back; the agent's model does not read it."""

    type: Literal["thinking", "redacted_thinking"]


Block = Annotated[
    TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock,
    Field(discriminator="type"),
]


class MessageParam(_Model):
    """A turn; a ``system`` one (Claude Code sends them among the turns) adds instructions."""

    role: Literal["user", "assistant", "system"]
    content: str | list[Block]


class ToolParam(_Model):
    """A client tool; ``type`` is absent or ``custom`` (Anthropic's server tools are not served)."""

    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    type: str | None = None


class ToolChoice(_Model):
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None
    disable_parallel_tool_use: bool | None = None


class OutputFormat(_Model):
    """``output_config.format``: structured outputs, a JSON schema the answer follows."""

    type: Literal["json_schema"]
    schema_: dict[str, Any] = Field(alias="schema")


Effort = Literal["low", "medium", "high", "xhigh", "max"]


class OutputConfig(_Model):
    """``output_config``: the answer's format, and how much effort it is worth."""

    format: OutputFormat | None = None
    effort: Effort | None = None


class ThinkingConfig(_Model):
    """``thinking``: ``enabled`` with a ``budget_tokens``, ``adaptive`` or ``disabled``
    (:mod:`.thinking` makes it the model's reasoning effort)."""

    type: Literal["enabled", "adaptive", "disabled"]
    # Anthropic's smallest budget. Not strict: JSON Schema's integers include 1.0.
    budget_tokens: int | None = Field(None, ge=1024, strict=False)


class CountTokensRequest(_Model):
    """``POST /v1/messages/count_tokens``."""

    model: str
    messages: list[MessageParam] = Field(min_length=1)
    system: str | list[TextBlock] | None = None
    tools: list[ToolParam] | None = None
    tool_choice: ToolChoice | None = None


class MessagesRequest(CountTokensRequest):
    """``POST /v1/messages``."""

    # Not strict: JSON Schema's integers include 1.0.
    max_tokens: int = Field(ge=1, strict=False)
    stream: bool = False
    temperature: float | None = Field(None, ge=0, le=1)
    top_p: float | None = Field(None, ge=0, le=1)
    top_k: int | None = Field(None, ge=0)
    stop_sequences: list[str] | None = None
    output_config: OutputConfig | None = None
    thinking: ThinkingConfig | None = None
    # Read to be refused by name (:func:`.convert.refuse_unserved`).
    mcp_servers: list[Any] | None = None
    container: Any = None


_MESSAGES = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["role", "content"],
        "properties": {"role": {"enum": ["user"]}, "content": {"type": "string", "minLength": 1}},
        "additionalProperties": False,
    },
}
COUNT_TOKENS_BODY = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": _MESSAGES,
        "system": {"type": "string"},
    },
    "additionalProperties": False,
}
"""The documented subset of a ``count_tokens`` body (every body it allows is accepted)."""
MESSAGES_BODY = {
    **COUNT_TOKENS_BODY,
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        **COUNT_TOKENS_BODY["properties"],  # type: ignore[dict-item]
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
        "stream": {"type": "boolean"},
    },
}
"""The documented subset of a ``POST /v1/messages`` body (the OpenAPI document's)."""
