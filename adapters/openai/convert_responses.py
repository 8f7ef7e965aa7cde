"""Pure mapping between the Responses API and agent runs (no HTTP here)."""

from __future__ import annotations

from typing import Any

from adapters.openai.checks import check_format, refuse_client_tools
from adapters.openai.errors import OpenAIError
from adapters.openai.schemas import ResponseInputItem, ResponseRequest
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


def check_supported(request: ResponseRequest, agent: Agent) -> None:
    """Refuse, naming the param, what the agent cannot honour (never drop it)."""
    refuse_client_tools(request.tools)
    if request.background:
        raise OpenAIError(
            400,
            "background responses are not supported",
            param="background",
            code="unsupported_parameter",
        )
    if request.previous_response_id and request.conversation:
        raise OpenAIError(
            400,
            "previous_response_id and conversation cannot be used together",
            param="conversation",
            code="invalid_value",
        )
    kind = request.text.format.type if request.text and request.text.format else "text"
    check_format(kind, agent, param="text.format")


def to_run(request: ResponseRequest) -> tuple[list[Message], RunOptions]:
    """The input items become messages; ``instructions`` (and system or
    developer items) become this run's extra instructions, never stored."""
    instructions = [request.instructions] if request.instructions else []
    messages: list[Message] = []
    items = (
        [ResponseInputItem(role="user", content=request.input)]
        if isinstance(request.input, str)
        else request.input
    )
    for index, item in enumerate(items):
        if item.type == "message" and item.role in ("system", "developer"):
            instructions.append(_item_text(item))
        else:
            messages.append(to_message(item, index))
    if not messages:
        raise OpenAIError(
            400, "input must contain at least one message", param="input", code="invalid_value"
        )
    format = request.text.format if request.text and request.text.format else None
    settings = ModelSettings(
        temperature=request.temperature,
        top_p=request.top_p,
        max_tokens=request.max_output_tokens,
        response_format=to_response_format(format.model_dump()) if format else None,
    )
    options = RunOptions(instructions="\n\n".join(instructions) or None, model_settings=settings)
    return messages, options


def to_response_format(format: dict[str, Any]) -> dict[str, Any] | None:
    """Responses' ``text.format`` → Chat Completions' ``response_format``."""
    kind = format.get("type", "text")
    if kind == "json_schema":
        schema = {k: format[k] for k in ("name", "schema", "strict", "description") if k in format}
        return {"type": "json_schema", "json_schema": schema}
    return None if kind == "text" else {"type": kind}


def to_message(item: ResponseInputItem, index: int) -> Message:
    if item.type == "function_call":
        call = ToolCallPart(
            id=item.call_id or "", name=item.name or "", arguments=item.arguments or "{}"
        )
        return Message(role="assistant", parts=[call])
    if item.type == "function_call_output":
        result = ToolResultPart(
            call_id=item.call_id or "", name=item.name or "", content=item.output or ""
        )
        return Message(role="tool", parts=[result])
    if item.type != "message" or item.role is None:
        raise OpenAIError(
            400,
            f"input item type {item.type!r} is not supported",
            param=f"input[{index}].type",
            code="unsupported_value",
        )
    parts: list[Part] = []
    if isinstance(item.content, str):
        parts.append(TextPart(text=item.content))
    else:
        for part in item.content or ():
            if part.type in ("input_text", "output_text") and part.text is not None:
                parts.append(TextPart(text=part.text))
            elif part.type == "input_image" and part.image_url:
                parts.append(FilePart(url=part.image_url, mime_type="image/*"))
            elif part.type == "input_file":
                parts.append(FilePart(url=part.file_url, data=part.file_data, name=part.filename))
    return Message(role="assistant" if item.role == "assistant" else "user", parts=parts)


def _item_text(item: ResponseInputItem) -> str:
    if isinstance(item.content, str):
        return item.content
    return "".join(p.text or "" for p in item.content or () if p.text)


def to_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens,
    }


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(id: str, text: str | None, *, status: str = "completed") -> dict[str, Any]:
    content = [] if text is None else [output_text(text)]
    return {"type": "message", "id": id, "status": status, "role": "assistant", "content": content}


def to_response(
    request: ResponseRequest,
    *,
    id: str,
    created_at: int,
    model: str,
    status: str = "completed",
    output: list[dict[str, Any]] | None = None,
    result: RunResult | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    incomplete = result is not None and result.finish_reason == "length"
    conversation = request.conversation
    return {
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": "incomplete" if incomplete else status,
        "model": model,
        "output": output or [],
        "usage": to_usage(result.usage) if result else None,
        "instructions": request.instructions,
        "previous_response_id": request.previous_response_id,
        "conversation": {"id": conversation if isinstance(conversation, str) else conversation.id}
        if conversation
        else None,
        "error": error,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "metadata": request.metadata or {},
        "parallel_tool_calls": True,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_output_tokens": request.max_output_tokens,
        "tool_choice": "auto",
        "tools": [],
        "text": {"format": request.text.format.model_dump()}
        if request.text and request.text.format
        else {"format": {"type": "text"}},
        "truncation": "disabled",
        "store": request.store,
        "background": False,
    }
