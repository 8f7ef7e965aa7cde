"""Pure mapping between Chat Completions and agent runs (no HTTP here)."""

from __future__ import annotations

from typing import Any

from adapters.openai.checks import check_format, refuse_client_tools
from adapters.openai.errors import OpenAIError
from adapters.openai.schemas import ChatCompletionRequest, ChatMessage
from agents import (
    Agent,
    FilePart,
    Message,
    ModelSettings,
    Part,
    RunOptions,
    RunResult,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)


def check_supported(request: ChatCompletionRequest, agent: Agent) -> None:
    """Refuse, naming the param, what the agent cannot honour (never drop it)."""
    refuse_client_tools(request.tools)
    if request.n is not None and request.n > 1:
        raise OpenAIError(400, "n > 1 is not supported", param="n", code="unsupported_value")
    if request.logprobs:
        raise OpenAIError(
            400, "logprobs are not supported", param="logprobs", code="unsupported_parameter"
        )
    check_format(
        (request.response_format or {}).get("type", "text"), agent, param="response_format"
    )


def to_run(request: ChatCompletionRequest) -> tuple[list[Message], RunOptions]:
    """System and developer messages become extra instructions; the rest is the input."""
    instructions: list[str] = []
    messages: list[Message] = []
    for message in request.messages:
        if message.role in ("system", "developer"):
            instructions.append(_text(message))
        else:
            messages.append(to_message(message))
    if not any(m.role == "user" for m in messages):
        raise OpenAIError(
            400, "messages must contain a user message", param="messages", code="invalid_value"
        )
    stop = request.stop
    settings = ModelSettings(
        temperature=request.temperature,
        top_p=request.top_p,
        max_tokens=request.max_completion_tokens or request.max_tokens,
        stop=(stop,) if isinstance(stop, str) else tuple(stop) if stop else None,
        seed=request.seed,
        frequency_penalty=request.frequency_penalty,
        presence_penalty=request.presence_penalty,
        response_format=request.response_format
        if (request.response_format or {}).get("type", "text") != "text"
        else None,
    )
    options = RunOptions(instructions="\n\n".join(instructions) or None, model_settings=settings)
    return messages, options


def to_message(message: ChatMessage) -> Message:
    if message.role == "tool":
        result = ToolResultPart(
            call_id=message.tool_call_id or "", name=message.name or "", content=_text(message)
        )
        return Message(role="tool", parts=[result])
    parts: list[Part] = []
    if isinstance(message.content, list):
        for item in message.content:
            if item.type == "text" and item.text is not None:
                parts.append(TextPart(text=item.text))
            elif item.type == "image_url" and item.image_url:
                parts.append(FilePart(url=str(item.image_url.get("url")), mime_type="image/*"))
    elif message.content:
        parts.append(TextPart(text=message.content))
    for call in message.tool_calls or ():
        parts.append(
            ToolCallPart(id=call.id, name=call.function.name, arguments=call.function.arguments)
        )
    if message.role == "assistant":
        return Message(role="assistant", parts=parts, name=message.name)
    return Message(role="user", parts=parts, name=message.name)


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, list):
        return "".join(p.text or "" for p in message.content if p.type == "text")
    return message.content or ""


def to_usage(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


def to_completion(result: RunResult, *, id: str, created: int, model: str) -> dict[str, Any]:
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": result.output, "refusal": None},
                "finish_reason": result.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": to_usage(result.usage),
        "system_fingerprint": None,
    }


class ChunkFactory:
    """Builds the chunks of one streamed completion (same id/created/model in each)."""

    def __init__(self, *, id: str, created: int, model: str, include_usage: bool) -> None:
        self._head = {
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
        }
        self._include_usage = include_usage

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        chunk = {
            **self._head,
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            ],
        }
        if self._include_usage:
            chunk["usage"] = None
        return chunk

    def usage(self, usage: Usage) -> dict[str, Any] | None:
        """The extra last chunk that carries usage, when the client asked for it."""
        if not self._include_usage:
            return None
        return {**self._head, "choices": [], "usage": to_usage(usage)}
