"""Pure mapping between Chat Completions and agent runs (no HTTP here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agenthost.adapters.openai.checks import check_format, client_tool, refuse, tool_choice
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import mime_of
from agenthost.adapters.openai.schemas import ChatCompletionRequest, ChatContentPart, ChatMessage
from agenthost.agents import (
    Agent,
    FilePart,
    Message,
    ModelSettings,
    Part,
    RunOptions,
    RunResult,
    TextPart,
    ToolCallDelta,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

_NO_OPTIONS: Final = RunOptions(model_settings=ModelSettings())
"""What :func:`to_run` makes of a request that sets no instructions, tools or settings."""


def check_supported(request: ChatCompletionRequest, agent: Agent) -> None:
    """Refuse, naming the param, what the agent cannot honour (never drop it)."""
    if request.n is not None and request.n > 1:
        raise OpenAIError(400, "n > 1 is not supported", param="n", code="unsupported_value")
    if request.logprobs or request.top_logprobs:
        raise refuse("logprobs", "logprobs are")
    check_format(
        (request.response_format or {}).get("type", "text"), agent, param="response_format"
    )


def to_run(request: ChatCompletionRequest) -> tuple[list[Message], RunOptions]:
    """System and developer messages become extra instructions; the rest is the input.

    The client's tools are offered beside the agent's own; a call of one
    ends the run with ``tool_calls``, and the client's next request carries
    the ``tool`` messages that answer it.
    """
    instructions: list[str] = []
    messages: list[Message] = []
    for index, message in enumerate(request.messages):
        if message.role in ("system", "developer"):
            instructions.append(_text(message))
        else:
            messages.append(to_message(message, index))
    if not any(m.role == "user" for m in messages):
        raise OpenAIError(
            400, "messages must contain a user message", param="messages", code="invalid_value"
        )
    tools = [
        client_tool(
            t.type,
            t.function.name if t.function else None,
            t.function.description if t.function else None,
            t.function.parameters if t.function else None,
            param=f"tools[{i}]",
        )
        for i, t in enumerate(request.tools or ())
    ]
    stop = request.stop
    response_format = request.response_format
    settings: dict[str, Any] = {  # ModelSettings(**settings) when any is set
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_completion_tokens or request.max_tokens,
        "stop": (stop,) if isinstance(stop, str) else tuple(stop) if stop else None,
        "seed": request.seed,
        "frequency_penalty": request.frequency_penalty,
        "presence_penalty": request.presence_penalty,
        "response_format": response_format
        if (response_format or {}).get("type", "text") != "text"
        else None,
        "tool_choice": tool_choice(request.tool_choice, tools),
        "parallel_tool_calls": request.parallel_tool_calls if tools else None,
        # OpenAI's field, or the ``reasoning`` object of OpenRouter and LiteLLM.
        "reasoning_effort": request.reasoning_effort
        or (request.reasoning.effort if request.reasoning else None),
    }
    if not instructions and not tools and all(value is None for value in settings.values()):
        # Most requests set nothing but their messages: the same (frozen) options for all.
        return messages, _NO_OPTIONS
    options = RunOptions(
        instructions="\n\n".join(instructions) or None,
        tools=tools or None,
        model_settings=ModelSettings(**settings),
    )
    return messages, options


def to_message(message: ChatMessage, index: int = 0) -> Message:
    if message.role == "tool":
        if not message.tool_call_id:
            raise OpenAIError(
                400,
                "a tool message needs tool_call_id",
                param=f"messages[{index}].tool_call_id",
                code="invalid_value",
            )
        result = ToolResultPart(
            call_id=message.tool_call_id, name=message.name or "", content=_text(message)
        )
        return Message(role="tool", parts=[result])
    parts: list[Part | dict[str, str]] = []
    if isinstance(message.content, list):
        for n, item in enumerate(message.content):
            parts.append(_part(item, f"messages[{index}].content[{n}]"))
    elif message.content:
        # Validated with the message, in one call: ~1 µs less than a TextPart built first.
        parts.append({"kind": "text", "text": message.content})
    for call in message.tool_calls or ():
        parts.append(
            ToolCallPart(id=call.id, name=call.function.name, arguments=call.function.arguments)
        )
    role = "assistant" if message.role == "assistant" else "user"
    return Message.model_validate({"role": role, "parts": parts, "name": message.name})


def _part(item: ChatContentPart, param: str) -> Part:
    """One content part; the model decides what it can read (and refuses the rest)."""
    if item.type in ("text", "refusal"):
        text = item.text if item.type == "text" else item.refusal
        if text is None:
            raise OpenAIError(
                400, f"a {item.type} part needs its text", param=param, code="invalid_value"
            )
        return TextPart(text=text)
    if item.type == "image_url" and item.image_url is not None:
        url = item.image_url.url
        return FilePart(url=url, mime_type=mime_of(url) or "image/*")
    if item.type == "input_audio" and item.input_audio is not None:
        audio = item.input_audio
        return FilePart(data=audio.data, mime_type=f"audio/{audio.format}")
    if item.type == "file" and item.file is not None and (item.file.file_data or item.file.file_id):
        data = item.file.file_data
        mime = mime_of(data)
        if data and mime:
            data = data.split(",", 1)[1]
        return FilePart(url=item.file.file_id, data=data, mime_type=mime, name=item.file.filename)
    raise OpenAIError(
        400, f"a {item.type} part needs its {item.type} field", param=param, code="invalid_value"
    )


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, list):
        return "".join(p.text or "" for p in message.content if p.type == "text")
    return message.content or ""


def to_usage(usage: Usage) -> dict[str, Any]:
    """The run's usage; ``completion_tokens_details`` when the upstream counted reasoning."""
    counts: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }
    if usage.reasoning_tokens:
        counts["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return counts


def to_completion(result: RunResult, *, id: str, created: int, model: str) -> dict[str, Any]:
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": to_assistant_message(result),
                "finish_reason": result.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": to_usage(result.usage),
        "service_tier": "default",
    }


def to_assistant_message(result: RunResult) -> dict[str, Any]:
    """The answer; calls the run waits on the client for are its ``tool_calls``."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": result.output or (None if result.pending else ""),
        "refusal": None,
        "annotations": [],
    }
    if result.reasoning:  # vLLM's and DeepSeek's field: the openai SDKs keep it as an extra
        message["reasoning_content"] = result.reasoning
    if result.pending:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in result.pending
        ]
    return message


def tool_call_deltas(
    pending: list[ToolCallPart], streamed: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The fragments of the calls still to send at the run's end: a call not streamed
    goes whole (id and name first, then the arguments); of a call streamed already (its
    arguments so far in ``streamed``, by id) only what the final call adds, if anything."""
    deltas: list[dict[str, Any]] = []
    for index, call in enumerate(pending):
        sent = streamed.get(call.id) if streamed else None
        if sent is None:
            deltas.append(tool_call_delta(ToolCallDelta(index, call.id, call.name, ""), first=True))
            deltas.append(tool_call_delta(ToolCallDelta(index, call.id, call.name, call.arguments)))
        elif len(call.arguments) > len(sent) and call.arguments.startswith(sent):
            rest = call.arguments[len(sent) :]  # an empty stream settled as "{}"
            deltas.append(tool_call_delta(ToolCallDelta(index, call.id, call.name, rest)))
    return deltas


def tool_call_delta(delta: ToolCallDelta, *, first: bool = False) -> dict[str, Any]:
    """One streamed fragment of a call: the ``first`` has the id, type and name."""
    if first:
        head = {"index": delta.index, "id": delta.id, "type": "function"}
        function = {"name": delta.name, "arguments": delta.arguments}
        return {"tool_calls": [{**head, "function": function}]}
    return {"tool_calls": [{"index": delta.index, "function": {"arguments": delta.arguments}}]}


class ChunkFactory:
    """Builds the chunks of one streamed completion (same id/created/model in each)."""

    def __init__(self, *, id: str, created: int, model: str, include_usage: bool) -> None:
        self._head = {
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "service_tier": "default",
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
