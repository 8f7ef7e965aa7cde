"""Conversion between agent messages and the OpenAI Chat Completions format.

Shared by every provider that speaks that format (the ``openai`` provider and
the embedded ``local`` runtime), so the mapping lives in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from agenthost.agents.messages import (
    PART_SEPARATOR,
    DataPart,
    FilePart,
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agenthost.agents.models.base import ModelResponse
from agenthost.agents.options import ModelSettings
from agenthost.agents.results import FinishReason, ToolCallDelta, Usage
from agenthost.agents.tools.base import ToolDefinition

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where OpenAI-compatible servers put a message's (or a delta's) reasoning text."""

_FINISH: dict[str, FinishReason] = {"length": "length", "content_filter": "content_filter"}


def to_chat_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Agent messages → OpenAI chat messages (tool results become ``tool`` messages)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool" or any(isinstance(p, ToolResultPart) for p in message.parts):
            out.extend(
                {"role": "tool", "tool_call_id": p.call_id, "content": p.content}
                for p in message.parts
                if isinstance(p, ToolResultPart)
            )
            continue
        entry: dict[str, Any] = {"role": message.role, "content": _content(message)}
        if message.role == "assistant" and message.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
            entry["content"] = entry["content"] or None
        if message.name:
            entry["name"] = message.name
        out.append(entry)
    return out


def _content(message: Message) -> str | list[dict[str, Any]]:
    files = [p for p in message.parts if isinstance(p, FilePart)]
    if not files or message.role != "user":
        # Each part is a piece of its own (a text, a JSON value): never glued together.
        return PART_SEPARATOR.join(text for p in message.parts if (text := _part_text(p)))
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, FilePart):
            content.append(to_chat_file(part))
        elif text := _part_text(part):
            content.append({"type": "text", "text": text})
    return content


def to_chat_file(part: FilePart) -> dict[str, Any]:
    """A file part as the Chat Completions content part of its kind."""
    mime = part.mime_type or ""
    if mime.startswith("image/"):
        url = part.url or f"data:{mime};base64,{part.data}"
        return {"type": "image_url", "image_url": {"url": url}}
    if mime.startswith("audio/") and part.data is not None:
        return {"type": "input_audio", "input_audio": {"data": part.data, "format": mime[6:]}}
    file: dict[str, Any] = {"filename": part.name} if part.name else {}
    if part.data is not None:
        file["file_data"] = f"data:{mime or 'application/octet-stream'};base64,{part.data}"
    elif part.url is not None:
        file["file_id" if part.url.startswith("file-") else "file_url"] = part.url
    return {"type": "file", "file": file}


def _part_text(part: Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, DataPart):
        return orjson.dumps(part.data).decode()
    if isinstance(part, FilePart):
        return f"[file {part.name or part.url or part.mime_type or ''}]"
    return ""


def to_chat_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            },
        }
        for t in tools
    ]


def to_chat_tool_choice(choice: str) -> str | dict[str, Any]:
    """``auto``/``none``/``required`` as they are; a tool name as a named function."""
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def to_chat_settings(settings: ModelSettings) -> dict[str, Any]:
    """Only the settings that are set; the upstream keeps its defaults for the rest."""
    params: dict[str, Any] = {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "max_tokens": settings.max_tokens,
        "stop": list(settings.stop) if settings.stop else None,
        "seed": settings.seed,
        "frequency_penalty": settings.frequency_penalty,
        "presence_penalty": settings.presence_penalty,
        "response_format": settings.response_format,
        "reasoning_effort": settings.reasoning_effort,
        **(settings.upstream_params or {}),
    }
    return {k: v for k, v in params.items() if v is not None}


def from_chat_message(message: Mapping[str, Any]) -> Message:
    """An OpenAI assistant message (dict) → agent message."""
    parts: list[Part] = []
    if message.get("content"):
        parts.append(TextPart(text=message["content"]))
    for call in message.get("tool_calls") or ():
        function = call["function"]
        parts.append(
            ToolCallPart(
                id=call["id"], name=function["name"], arguments=function["arguments"] or "{}"
            )
        )
    return Message(role="assistant", parts=parts)


def from_chat_reasoning(message: Mapping[str, Any]) -> str:
    """The reasoning an upstream sends beside the answer: ``reasoning_content`` (vLLM,
    DeepSeek, llama.cpp) or ``reasoning`` (Ollama, OpenRouter), a string."""
    for name in REASONING_FIELDS:
        if isinstance(value := message.get(name), str) and value:
            return value
    return ""


def from_chat_usage(usage: Mapping[str, Any] | None) -> Usage:
    """An upstream's ``usage``; its ``completion_tokens_details.reasoning_tokens``
    (OpenAI, vLLM, DeepSeek) when it reports them."""
    if not usage:
        return Usage(requests=1)
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
    return Usage(
        usage.get("prompt_tokens") or 0,
        usage.get("completion_tokens") or 0,
        1,
        reasoning if isinstance(reasoning, int) else 0,
    )


def from_finish_reason(reason: str | None) -> FinishReason:
    return _FINISH.get(reason or "", "stop")


class ChatStreamAccumulator:
    """Folds streamed Chat Completions chunks (as dicts) into one response.

    ``add`` returns the chunk's text, if any, for the caller to stream on,
    and keeps its reasoning in ``reasoning_delta`` (see :meth:`take_reasoning`);
    tool call fragments are joined by ``index``, and each new piece of a
    call's arguments waits in ``call_deltas`` (see :meth:`take_call_deltas`)
    once the call's name is known.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self.reasoning_delta = ""
        self._calls: dict[int, dict[str, str]] = {}
        self._relayed: dict[int, int] = {}  # characters of arguments passed on, per call
        self._usage = Usage(requests=1)
        self._finish: str | None = None
        self.call_deltas: list[ToolCallDelta] = []

    def add(self, chunk: Mapping[str, Any]) -> str | None:
        if chunk.get("usage"):
            self._usage = from_chat_usage(chunk["usage"])
        content: str | None = None
        for choice in chunk.get("choices") or ():
            self._finish = choice.get("finish_reason") or self._finish
            delta = choice.get("delta") or {}
            if content := delta.get("content"):
                self._text.append(content)
            if reasoning := from_chat_reasoning(delta):
                self._reasoning.append(reasoning)
                self.reasoning_delta += reasoning
            for fragment in delta.get("tool_calls") or ():
                self._add_call(fragment)
        return content

    def _add_call(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index") or 0
        call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        function = fragment.get("function") or {}
        call["id"] = fragment.get("id") or call["id"]
        call["name"] = function.get("name") or call["name"]
        call["arguments"] += function.get("arguments") or ""
        relayed = self._relayed.get(index)
        # Pieces are passed on once the name is known (who is called decides who runs it).
        if call["name"] and (relayed is None or relayed < len(call["arguments"])):
            piece = call["arguments"][relayed or 0 :]
            self._relayed[index] = len(call["arguments"])
            id = call["id"] or f"call_{index}"
            self.call_deltas.append(ToolCallDelta(index, id, call["name"], piece))

    def take_reasoning(self) -> str:
        """The reasoning added since the last take."""
        reasoning, self.reasoning_delta = self.reasoning_delta, ""
        return reasoning

    def take_call_deltas(self) -> list[ToolCallDelta]:
        """The pieces of tool calls added since the last take."""
        deltas, self.call_deltas = self.call_deltas, []
        return deltas

    def response(self) -> ModelResponse:
        parts: list[Part] = [TextPart(text="".join(self._text))] if self._text else []
        parts.extend(
            ToolCallPart(
                id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"] or "{}"
            )
            for i, c in sorted(self._calls.items())
        )
        message = Message(role="assistant", parts=parts)
        reasoning = "".join(self._reasoning)
        return ModelResponse(message, self._usage, from_finish_reason(self._finish), reasoning)
