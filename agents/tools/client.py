"""Tools the runtime never runs: the client answers them.

A run whose model calls one of these ends *waiting for the client*
(:attr:`~agents.results.RunResult.pending`). It is one outcome for every
protocol: OpenAI client tools (``finish_reason: "tool_calls"``), A2A's
``input-required`` and ACP's ``awaiting``. The client's answer comes back as
a ``tool`` message of :class:`~agents.messages.ToolResultPart` (one per
pending call) in the next run's input, and the run continues from there.

:data:`ASK_USER` is the built-in way for an agent to ask its user a
question (``tools: [ask_user]`` in config); protocols without client tools
present it as a question and turn the user's reply into its result with
:func:`answer_pending`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.tools.base import ToolDefinition


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool declared by the client (or the built-in ``ask_user``): a definition only."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.parameters)


ASK_USER = ClientTool(
    "ask_user",
    "Ask the user a question and wait for the answer. Use it when you need "
    "information only the user has; the answer comes back as this tool's result.",
    {
        "type": "object",
        "properties": {"question": {"type": "string", "description": "What to ask the user."}},
        "required": ["question"],
    },
)


LIST_ROOTS = ClientTool(
    "list_roots",
    "List the roots (directories and files) the user's client shares with you. The "
    "result is a JSON list of {uri, name}; an error when the client shares none.",
    {"type": "object", "properties": {}},
)
"""The client's roots (MCP ``roots/list``): ``tools: [list_roots]`` in config."""

ASK_CLIENT_MODEL = ClientTool(
    "ask_client_model",
    "Ask the client's own model (the user's LLM) to complete a prompt; the result is its answer.",
    {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "What to ask the client's model."},
            "max_tokens": {"type": "integer", "description": "The longest answer wanted."},
        },
        "required": ["prompt"],
    },
)
"""A completion by the client's model (MCP ``sampling/createMessage``):
``tools: [ask_client_model]`` in config."""


def arguments_of(call: ToolCallPart) -> dict[str, Any]:
    """A client call's arguments as an object (empty when they are not one)."""
    try:
        arguments = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def question_of(call: ToolCallPart) -> str | None:
    """The question of a pending ``ask_user`` call, or None for any other call."""
    if call.name != ASK_USER.name:
        return None
    try:
        arguments = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return call.arguments
    question = arguments.get("question") if isinstance(arguments, dict) else None
    return str(question) if question is not None else call.arguments


def form_of(call: ToolCallPart) -> dict[str, Any] | None:
    """The answer form of a pending ``ask_user`` call: its ``schema`` argument (a JSON
    Schema object of flat fields, as MCP elicitation takes), or None for a free answer.

    Code agents can ask with a form; the answer then comes back as the JSON of
    ``{"action": "accept" | "decline" | "cancel", "content": {...}}``.
    """
    if call.name != ASK_USER.name:
        return None
    try:
        arguments = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return None
    schema = arguments.get("schema") if isinstance(arguments, dict) else None
    return schema if isinstance(schema, dict) else None


def answer_pending(pending: Sequence[ToolCallPart], reply: str) -> Message:
    """A user's reply to a run waiting for input, as the tool message that resumes it.

    Every pending call gets the reply as its result, so a model that asked
    two questions at once sees the same answer for both.
    """
    results = [ToolResultPart(call_id=c.id, name=c.name, content=reply) for c in pending]
    return Message(role="tool", parts=list(results))
