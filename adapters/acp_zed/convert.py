"""Pure mapping between Zed's Agent Client Protocol (``acp.schema``) and the runtime's types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from acp import text_block, tool_content, update_agent_message_text, update_user_message_text
from acp.helpers import start_tool_call, update_tool_call
from acp.schema import (
    AgentMessageChunk,
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from acp.schema import Usage as ACPUsage

from agenthost.agents import (
    FilePart,
    Message,
    Part,
    RunResult,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    question_of,
)

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
    "tool_calls": "end_turn",  # the turn ends with a question to the user
}


def to_parts(prompt: Sequence[ContentBlock]) -> list[Part]:
    """A prompt's content blocks as message parts; embedded files become framed text."""
    parts: list[Part] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            parts.append(TextPart(text=block.text))
        elif isinstance(block, ImageContentBlock | AudioContentBlock):
            parts.append(FilePart(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, ResourceContentBlock):
            parts.append(FilePart(url=block.uri, mime_type=block.mime_type, name=block.name))
        else:
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                parts.append(
                    FilePart(data=resource.blob, mime_type=resource.mime_type, name=resource.uri)
                )
            else:
                text = f'<file uri="{resource.uri}">\n{resource.text}\n</file>'
                parts.append(TextPart(text=text))
    return parts


def tool_started(call: ToolCallPart) -> ToolCallStart:
    """One of the agent's own tools started: a ``tool_call`` update."""
    return start_tool_call(
        call.id, call.name, kind="other", status="in_progress", raw_input=_arguments(call)
    )


def tool_finished(result: ToolResultPart) -> ToolCallProgress:
    """It finished: a ``tool_call_update`` with its output (or its error)."""
    return update_tool_call(
        result.call_id,
        status="failed" if result.is_error else "completed",
        content=[tool_content(text_block(result.content))],
        raw_output=result.content,
    )


def _arguments(call: ToolCallPart) -> Any:
    try:
        return orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return call.arguments


def question_text(pending: Sequence[ToolCallPart]) -> str:
    """What a run waiting for its user asks (the user's next prompt answers it)."""
    return "\n".join(question_of(call) or f"{call.name}({call.arguments})" for call in pending)


def stop_reason(result: RunResult) -> StopReason:
    return _STOP_REASONS.get(result.finish_reason, "end_turn")


def to_usage(usage: Usage) -> ACPUsage | None:
    if not usage.requests:
        return None
    return ACPUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
    )


def replay(messages: Sequence[Message]) -> list[UserMessageChunk | AgentMessageChunk]:
    """A stored conversation as the updates ``session/load`` sends: user and agent text."""
    updates: list[UserMessageChunk | AgentMessageChunk] = []
    for message in messages:
        if message.role == "user" and message.text:
            updates.append(update_user_message_text(message.text))
        elif message.role == "assistant" and message.text:
            updates.append(update_agent_message_text(message.text))
    return updates
