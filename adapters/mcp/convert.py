"""Pure mapping between agents and MCP: tools, arguments, results, errors.

No SDK glue here beyond the wire types, so every mapping is tested without
a transport.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
import orjson
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenthost.agents import (
    Agent,
    ChatAgent,
    ToolCallPart,
    question_of,
)
from agenthost.agents.messages import FilePart, Part

if TYPE_CHECKING:
    from agenthost.adapters.mcp.inputs import ToolInput

MAX_SESSION_ID = 200

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {
            "type": "string",
            "description": "What to say to the agent (none: an empty turn, for an agent "
            "that needs no input).",
        },
        "session_id": {
            "type": "string",
            "maxLength": MAX_SESSION_ID,
            "description": "Continue the conversation of this id (any name you choose); "
            "without it the call starts a new, unsaved conversation.",
        },
    },
    "additionalProperties": False,
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The agent's answer (or its question)."},
        "status": {"type": "string", "enum": ["completed", "input_required"]},
        "session_id": {
            "type": ["string", "null"],
            "description": "Pass it back as session_id to continue (or to answer a question).",
        },
    },
    "required": ["text", "status", "session_id"],
}

# Tools whose effects are known: they read nothing outside and change nothing.
_CONTAINED_TOOLS = frozenset({"calculator", "current_time", "ask_user"})
# Model classes that answer in-process (no hosted model is called).
_IN_PROCESS_MODELS = frozenset(
    {
        "agenthost.agents.models.echo",
        "agenthost.agents.models.testing",
        "agenthost.agents.models.local",
    }
)


class CallArguments(BaseModel):
    """The arguments of every agent tool."""

    model_config = ConfigDict(extra="forbid", strict=True)

    message: str = ""
    session_id: str | None = Field(None, min_length=1, max_length=MAX_SESSION_ID)


def parse_arguments(arguments: Mapping[str, Any] | None) -> CallArguments:
    """Validated arguments, or the protocol's invalid-params error naming the field."""
    try:
        return CallArguments.model_validate(arguments or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        raise MCPError(
            types.INVALID_PARAMS, f"invalid arguments: {where}: {first['msg']}"
        ) from None


def unknown_tool(name: str) -> MCPError:
    # The spec's error for a tool the server does not have (or hides from this caller).
    return MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")


def tool_annotations(agent: Agent) -> types.ToolAnnotations:
    """What a client may assume about calling ``agent``: true hints only.

    A run appends to a conversation and a model's answers vary, so no agent
    is read-only or idempotent. Only a chat agent whose model answers
    in-process and whose tools are the contained built-ins is known not to
    reach the outside world or change anything there; anything else (hosted
    models, external or code tools, code agents) may.
    """
    contained = False
    if isinstance(agent, ChatAgent):
        tools = {tool.name for tool in agent.options.tools or ()}
        in_process = type(agent.model).__module__ in _IN_PROCESS_MODELS
        contained = in_process and tools <= _CONTAINED_TOOLS
    return types.ToolAnnotations(
        title=agent.name,
        read_only_hint=False,
        destructive_hint=not contained,
        idempotent_hint=False,
        open_world_hint=not contained,
    )


def to_tool(agent: Agent, tool_input: ToolInput | None = None) -> types.Tool:
    """The agent's tool; typed arguments (``mcp.input_schema``) replace the default ones."""
    required = tool_input is not None and tool_input.task_support == "required"
    return types.Tool(
        name=agent.name,
        description=agent.description or f"Talk to the agent {agent.name}.",
        input_schema=tool_input.input_schema if tool_input is not None else INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        annotations=tool_annotations(agent),
        execution=types.ToolExecution(task_support="required") if required else None,
    )


def to_result(
    text: str, session_id: str | None, parts: Sequence[Part] = ()
) -> types.CallToolResult:
    """The answer; files among the answer's ``parts`` follow its text as their own content
    (images, audio, and any other file as an embedded resource)."""
    result = _result(text, "completed", session_id)
    files = [to_content(part) for part in parts if isinstance(part, FilePart)]
    result.content = [
        *(result.content if text or not files else []),
        *(content for content in files if content is not None),
    ]
    return result


Content = types.ImageContent | types.AudioContent | types.EmbeddedResource | types.ResourceLink


def to_content(file: FilePart) -> Content | None:
    """An inline file as MCP content; a file given by URL as a resource link."""
    mime = file.mime_type or "application/octet-stream"
    if file.data is not None and mime.startswith("image/"):
        return types.ImageContent(type="image", data=file.data, mime_type=mime)
    if file.data is not None and mime.startswith("audio/"):
        return types.AudioContent(type="audio", data=file.data, mime_type=mime)
    uri = file.url or f"file:///{file.name or 'attachment'}"
    if file.data is None:
        if file.url is None:
            return None
        name = file.name or file.url.rsplit("/", 1)[-1] or file.url
        return types.ResourceLink(type="resource_link", uri=file.url, name=name, mime_type=mime)
    if mime.startswith("text/") or mime == "application/json":
        try:
            return _embedded_text(uri, mime, base64.b64decode(file.data).decode())
        except (ValueError, UnicodeDecodeError):
            pass
    blob = types.BlobResourceContents(uri=uri, blob=file.data, mime_type=mime)
    return types.EmbeddedResource(type="resource", resource=blob)


def _embedded_text(uri: str, mime: str, text: str) -> types.EmbeddedResource:
    contents = types.TextResourceContents(uri=uri, text=text, mime_type=mime)
    return types.EmbeddedResource(type="resource", resource=contents)


def to_question(pending: Sequence[ToolCallPart], session_id: str) -> types.CallToolResult:
    """A run waiting for its user, as a result the next call answers."""
    questions = [q for call in pending if (q := question_of(call)) is not None]
    text = "\n".join(questions) or "The agent is waiting for input."
    hint = f"\n\n(Answer with another call with session_id {session_id!r}.)"
    result = _result(text, "input_required", session_id)
    result.content = [types.TextContent(type="text", text=text + hint)]
    return result


def _result(
    text: str, status: Literal["completed", "input_required"], session_id: str | None
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"text": text, "status": status, "session_id": session_id},
    )


def describe(agent: Agent, protocols: Sequence[str]) -> dict[str, Any]:
    """The agent as the JSON of its resource."""
    info: dict[str, Any] = {"name": agent.name, "description": agent.description}
    if isinstance(agent, ChatAgent):
        info["model"] = agent.model.name
        info["tools"] = [tool.name for tool in agent.options.tools or ()]
    info["protocols"] = list(protocols)
    return info


def resource_uri(agent: Agent) -> str:
    return f"agent://{agent.name}"


def to_resource(agent: Agent) -> types.Resource:
    return types.Resource(
        uri=resource_uri(agent),
        name=agent.name,
        description=f"What the agent {agent.name} is: model, tools, protocols (JSON).",
        mime_type="application/json",
    )


def resource_contents(agent: Agent, protocols: Sequence[str]) -> types.ReadResourceResult:
    text = orjson.dumps(describe(agent, protocols), option=orjson.OPT_INDENT_2).decode()
    contents = types.TextResourceContents(
        uri=resource_uri(agent), text=text, mime_type="application/json"
    )
    return types.ReadResourceResult(contents=[contents])


def to_prompt(agent: Agent) -> types.Prompt:
    argument = types.PromptArgument(name="message", description="What to ask.", required=True)
    return types.Prompt(
        name=agent.name,
        description=f"Ask the agent {agent.name}: {agent.description}".rstrip(": "),
        arguments=[argument],
    )


def prompt_messages(agent: Agent, arguments: Mapping[str, str] | None) -> types.GetPromptResult:
    """A user message that asks the host's model to hand ``message`` to the agent's tool."""
    message = (arguments or {}).get("message")
    if not message:
        raise MCPError(types.INVALID_PARAMS, "missing prompt argument: message")
    text = f"Use the tool {agent.name} to answer this: {message}"
    content = types.TextContent(type="text", text=text)
    return types.GetPromptResult(
        description=agent.description or None,
        messages=[types.PromptMessage(role="user", content=content)],
    )
