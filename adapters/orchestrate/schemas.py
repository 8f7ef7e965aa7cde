"""The request body watsonx Orchestrate sends an external agent's ``/chat/completions``.

From the external-agent spec (``external_agent/spec.yaml`` of IBM's
watsonx-orchestrate-developer-toolkit) and its reference agents' models:
OpenAI-like ``messages`` (roles ``user``/``human``, ``assistant`` with
``tool_calls``, ``system``, ``tool`` with ``tool_call_id``), ``stream``,
``model`` (the agent is chosen by the URL here, so it is only echoed), and
``extra_body.thread_id`` (the ``X-IBM-THREAD-ID`` header wins over it).
Fields Orchestrate may add (``context``, chat params) are accepted and unused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCall(_Lenient):
    name: str
    arguments: str | dict[str, Any] = "{}"


class ToolCall(_Lenient):
    id: str
    type: str = "function"
    function: FunctionCall


class TextContent(_Lenient):
    type: Literal["text"]
    text: str


class ChatMessage(_Lenient):
    role: Literal["user", "human", "assistant", "system", "developer", "tool"]
    content: str | list[TextContent] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content)
        return self.content or ""


class ExtraBody(_Lenient):
    thread_id: str | None = None


class ChatRequest(_Lenient):
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = False
    extra_body: ExtraBody | None = None
    context: dict[str, Any] | None = None


CHAT_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "minItems": 1, "items": {"type": "object"}},
        "stream": {"type": ["boolean", "null"]},
        "extra_body": {"type": "object", "properties": {"thread_id": {"type": "string"}}},
    },
}
"""The body in the OpenAPI document (the route reads and validates it itself)."""
