"""Pure mapping between the Messages API and agent runs (no HTTP here).

``system`` (and any ``system`` turn) becomes extra instructions; each message its parts. A user
message's ``tool_result`` blocks become a ``tool`` message answering the
``tool_use`` blocks of the assistant turn before it (their images and documents a
user message after it, :mod:`.media`), so the client's tools
work as ``/v1``'s do: the model sees them beside the agent's own tools, a
call of one ends the run with ``stop_reason: "tool_use"``, and the client's
next request carries the results. The agent's own tools run on the server
and never show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agenthost.adapters.anthropic.errors import invalid
from agenthost.adapters.anthropic.media import attachments, to_part, tool_result_content
from agenthost.adapters.anthropic.schemas import (
    Block,
    CountTokensRequest,
    DocumentBlock,
    ImageBlock,
    MessageParam,
    MessagesRequest,
    OutputConfig,
    TextBlock,
    ToolChoice,
    ToolParam,
    ToolResultBlock,
    ToolUseBlock,
)
from agenthost.adapters.anthropic.thinking import to_reasoning_effort
from agenthost.agents import (
    ClientTool,
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

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}
"""A run's finish reason as Anthropic's ``stop_reason``."""


def to_run(
    request: MessagesRequest, *, interleaved: bool = False
) -> tuple[list[Message], RunOptions]:
    """The run's input and options; what the agent cannot honour is a 400.
    ``interleaved``: the client asked for an ``interleaved-thinking`` beta."""
    refuse_unserved(request)
    messages, tools = to_messages(request), to_tools(request.tools)
    stop = request.stop_sequences
    choice = request.tool_choice
    settings = ModelSettings(
        temperature=request.temperature,
        top_p=request.top_p,
        max_tokens=request.max_tokens,
        stop=tuple(stop) if stop else None,
        response_format=to_response_format(request.output_config),
        reasoning_effort=to_reasoning_effort(request, interleaved=interleaved),
        tool_choice=to_tool_choice(choice, tools),
        parallel_tool_calls=(
            not choice.disable_parallel_tool_use
            if choice is not None and choice.disable_parallel_tool_use is not None and tools
            else None
        ),
    )
    options = RunOptions(
        instructions=instructions(request), tools=tools or None, model_settings=settings
    )
    return messages, options


def refuse_unserved(request: MessagesRequest) -> None:
    """Fields whose meaning the server cannot honour: a 400 naming them, never dropped."""
    if request.top_k is not None:
        raise invalid("top_k: not supported (the agent's model takes temperature and top_p)")
    if request.mcp_servers:
        raise invalid(
            "mcp_servers: the MCP connector is not served; give the agent MCP tools in its config"
        )
    if request.container is not None:
        raise invalid("container: containers (code execution) are not served")


def to_response_format(config: OutputConfig | None) -> dict[str, Any] | None:
    """``output_config.format`` as the runtime's (Chat Completions') ``response_format``."""
    if config is None or config.format is None:
        return None
    schema = {"name": "output", "schema": config.format.schema_}
    return {"type": "json_schema", "json_schema": schema}


def instructions(request: CountTokensRequest) -> str | None:
    """``system``, then the text of any ``system`` turn, as extra instructions."""
    texts = [_text(request.system)]
    texts += [_text(m.content) for m in request.messages if m.role == "system"]
    return "\n\n".join(text for text in texts if text) or None


def _text(content: str | Sequence[Block] | None) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "\n\n".join(block.text for block in content if isinstance(block, TextBlock))


def to_messages(request: CountTokensRequest) -> list[Message]:
    """The conversation as the runtime's messages (``tool_use`` ids checked against results)."""
    names: dict[str, str] = {}  # tool_use id → tool name, from the assistant turns so far
    messages: list[Message] = []
    for index, message in enumerate(request.messages):
        if message.role != "system":  # instructions (:func:`instructions`)
            messages += _message(message, f"messages.{index}", names)
    if not messages:
        raise invalid("messages: a user or assistant turn is needed besides system ones")
    return messages


def _message(message: MessageParam, where: str, names: dict[str, str]) -> list[Message]:
    blocks: list[Block] = (
        [TextBlock(type="text", text=message.content)]
        if isinstance(message.content, str)
        else message.content
    )
    if message.role == "assistant":
        parts = [
            part
            for n, block in enumerate(blocks)
            if (part := _assistant_part(block, f"{where}.content.{n}", names)) is not None
        ]
        return [Message(role="assistant", parts=parts)]
    results: list[Part] = []
    parts = []  # a tool_result's files first (:mod:`.media`), then the turn's own parts
    for n, block in enumerate(blocks):
        if isinstance(block, ToolResultBlock):
            result, files = _tool_result(block, f"{where}.content.{n}", names)
            results.append(result)
            parts += attachments(result.call_id, result.name, files)
        elif (part := _user_part(block, f"{where}.content.{n}")) is not None:
            parts.append(part)
    if not results and not parts:
        raise invalid(f"{where}.content: a user message needs non-empty content")
    out = [Message(role="tool", parts=results)] if results else []
    return out + ([Message(role="user", parts=parts)] if parts else [])


def _assistant_part(block: Block, where: str, names: dict[str, str]) -> Part | None:
    if isinstance(block, ToolUseBlock):
        names[block.id] = block.name
        return ToolCallPart(
            id=block.id, name=block.name, arguments=orjson.dumps(block.input).decode()
        )
    if isinstance(block, ToolResultBlock):
        raise invalid(f"{where}: tool_result blocks belong in user messages")
    return _user_part(block, where)


def _user_part(block: Block, where: str) -> Part | None:
    if isinstance(block, TextBlock):
        return TextPart(text=block.text) if block.text else None
    if isinstance(block, ImageBlock | DocumentBlock):
        return to_part(block, where)
    if isinstance(block, ToolUseBlock):
        raise invalid(f"{where}: tool_use blocks belong in assistant messages")
    return None  # thinking: the agent's model does not read a client's reasoning blocks


def _tool_result(
    block: ToolResultBlock, where: str, names: dict[str, str]
) -> tuple[ToolResultPart, list[FilePart]]:
    name = names.get(block.tool_use_id)
    if name is None:
        raise invalid(
            f"{where}.tool_use_id: {block.tool_use_id!r} answers no tool_use block of an "
            "earlier assistant message"
        )
    content, files = tool_result_content(block.content, f"{where}.content")
    part = ToolResultPart(
        call_id=block.tool_use_id, name=name, content=content, is_error=block.is_error
    )
    return part, files


def to_tools(tools: list[ToolParam] | None) -> list[ClientTool]:
    """The client's tools; Anthropic's server tools (``web_search_…``, ``bash_…``) are a 400."""
    client: list[ClientTool] = []
    for index, tool in enumerate(tools or ()):
        if tool.type not in (None, "custom"):
            raise invalid(
                f"tools.{index}.type: tools of type {tool.type!r} are not served; "
                "only custom (client) tools are"
            )
        schema = tool.input_schema or {"type": "object", "properties": {}}
        client.append(ClientTool(tool.name, tool.description or "", schema))
    return client


def to_tool_choice(choice: ToolChoice | None, tools: list[ClientTool]) -> str | None:
    """``tool_choice`` as the runtime's (a mode or a tool name)."""
    if choice is None or choice.type == "auto":
        return None if choice is None else "auto"
    if choice.type == "none":
        return "none"
    if not tools:
        raise invalid(f"tool_choice: {choice.type!r} needs tools")
    if choice.type == "any":
        return "required"
    if choice.name not in {t.name for t in tools}:
        raise invalid(f"tool_choice.name: {choice.name!r} is not one of the request's tools")
    return choice.name


def to_input(arguments: str) -> dict[str, Any]:
    """A call's JSON arguments as a ``tool_use`` block's ``input`` (an object)."""
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def to_content(result: RunResult) -> list[dict[str, Any]]:
    """The model's reasoning, the answer's text, then the calls the run waits on the
    client for."""
    content: list[dict[str, Any]] = []
    if result.reasoning:
        content.append(thinking_block(result.reasoning))
    if result.output:
        content.append({"type": "text", "text": result.output})
    for call in result.pending:
        content.append(tool_use(call, to_input(call.arguments)))
    return content


def thinking_block(thinking: str) -> dict[str, Any]:
    """An upstream's reasoning as a ``thinking`` block. The SDKs' type requires a
    ``signature``; it is empty: nothing verifies a thinking block sent back here."""
    return {"type": "thinking", "thinking": thinking, "signature": ""}


def tool_use(call: ToolCallPart, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": input}


def to_usage(usage: Usage) -> dict[str, int]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}


def to_message(result: RunResult | None, *, id: str, model: str) -> dict[str, Any]:
    """A ``message`` object: the answer of ``result``, or the empty one a stream starts with."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": to_content(result) if result is not None else [],
        "stop_reason": STOP_REASONS[result.finish_reason] if result is not None else None,
        "stop_sequence": None,
        "usage": to_usage(result.usage if result is not None else Usage()),
    }
