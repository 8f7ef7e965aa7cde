"""Pure mapping between IBM ACP's wire models (``acp_sdk.models``) and the runtime's.

No HTTP here: messages in, messages and parts out, so it is tested alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from acp_sdk.models import (
    AgentManifest,
    Capability,
    Message,
    MessagePart,
    Metadata,
    TrajectoryMetadata,
)
from acp_sdk.models.common import AnyModel

from agenthost.adapters.acp.timeline import shown
from agenthost.agents import (
    Agent,
    BaseAgent,
    ChatAgent,
    DataPart,
    FilePart,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UserError,
    question_of,
)
from agenthost.agents import Message as AgentMessage
from agenthost.agents.messages import PART_SEPARATOR

# What the runtime takes and gives: text, JSON, and files (as URLs or base64).
INPUT_TYPES = ["text/plain", "application/json", "image/*", "*/*"]
OUTPUT_TYPES = ["text/plain"]


def agent_role(agent: str) -> str:
    """The role of an agent's messages, as acp-sdk names it (``agent/<name>``)."""
    return f"agent/{agent}"


def to_manifest(agent: Agent) -> AgentManifest:
    """What ``GET /agents`` says of an agent: description, content types, what config knows."""
    metadata = Metadata(framework="agenthost")
    if isinstance(agent, BaseAgent):
        tools = agent.options.tools or ()
        capabilities = [Capability(name=t.name, description=t.description) for t in tools]
        metadata.capabilities = capabilities or None
    if isinstance(agent, ChatAgent):
        metadata.recommended_models = [agent.model.name]
    return AgentManifest(
        name=agent.name,
        description=agent.description or None,
        metadata=metadata,
        input_content_types=INPUT_TYPES,
        output_content_types=OUTPUT_TYPES,
    )


def from_acp_messages(messages: Sequence[Message]) -> list[AgentMessage]:
    """A run's input: ``user`` → user, ``agent`` / ``agent/<name>`` → assistant.

    Parts without content (trajectory-only parts) are dropped; input with no
    content at all is refused.
    """
    converted = []
    for message in messages:
        parts = [part for p in message.parts if (part := _from_part(p)) is not None]
        if parts:
            role = "user" if message.role == "user" else "assistant"
            converted.append(AgentMessage(role=role, parts=parts))
    if not converted:
        raise UserError("the input has no content", param="input")
    return converted


def _from_part(part: MessagePart) -> Part | None:
    mime = part.content_type or "text/plain"
    if part.content_url is not None:
        return FilePart(url=str(part.content_url), mime_type=mime, name=part.name)
    if part.content is None:
        return None
    if part.content_encoding == "base64":
        return FilePart(data=part.content, mime_type=mime, name=part.name)
    if mime == "application/json" or mime.endswith("+json"):
        try:
            return DataPart(data=orjson.loads(part.content), mime_type=mime)
        except orjson.JSONDecodeError:
            raise UserError(f"a part of type {mime} is not valid JSON", param="input") from None
    return TextPart(text=part.content)


def text_of(message: Message) -> str:
    """The text of a message (what a reply to an ``ask_user`` question says)."""
    return PART_SEPARATOR.join(
        p.content for p in message.parts if p.content is not None and p.content_url is None
    )


def text_part(text: str) -> MessagePart:
    return MessagePart(content=text, content_type="text/plain")


def tool_started_part(call: ToolCallPart) -> MessagePart:
    """An agent's own tool call, shown as trajectory metadata."""
    return MessagePart(
        content=None,
        metadata=TrajectoryMetadata(tool_name=call.name, tool_input=_arguments(call.arguments)),
    )


def tool_finished_part(result: ToolResultPart) -> MessagePart:
    output = AnyModel.model_validate({"content": result.content, "is_error": result.is_error})
    return MessagePart(
        content=None, metadata=TrajectoryMetadata(tool_name=result.name, tool_output=output)
    )


def _arguments(raw: str) -> AnyModel:
    try:
        value: Any = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        value = None
    return AnyModel.model_validate(value if isinstance(value, dict) else {"arguments": raw})


def append_part(message: Message, part: MessagePart) -> None:
    """Add ``part`` to a message being built, joining consecutive text into one part."""
    last = message.parts[-1] if message.parts else None
    if _is_text(part) and last is not None and _is_text(last):
        last.content = (last.content or "") + (part.content or "")
    else:
        message.parts.append(part.model_copy())


def _is_text(part: MessagePart) -> bool:
    return part.content_type == "text/plain" and part.metadata is None and part.name is None


def question_message(agent: str, pending: Sequence[ToolCallPart]) -> Message:
    """What an awaiting run asks its client: the ``ask_user`` question(s)."""
    questions = [question_of(call) or f"{call.name}({call.arguments})" for call in pending]
    return Message(role=agent_role(agent), parts=[text_part("\n".join(questions))])


def to_history(agent: str, messages: Sequence[AgentMessage]) -> list[Message]:
    """A session's conversation as ACP messages: user and agent text, no tool traffic."""
    return [history_message(agent, m) for m in messages if shown(m)]


def history_message(agent: str, message: AgentMessage) -> Message:
    """One user or agent message of a session's history, as ACP shows it."""
    role = "user" if message.role == "user" else agent_role(agent)
    return Message(role=role, parts=[text_part(message.text)])
