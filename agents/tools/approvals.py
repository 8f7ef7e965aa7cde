"""Tools that run only once the user approves the call (``approval: required``).

A run whose model calls such a tool does not run it. The run ends waiting for
the client, as for :data:`~agents.tools.client.ASK_USER`, with an ``ask_user``
call of the same id (:func:`approval_request`): "Allow NAME to run with ARGS?"
and a one-field form (``approve``). So every protocol asks in its own way
(A2A ``input-required``, IBM ACP ``awaiting``, MCP elicitation, Zed's
permission prompt, an AG-UI interrupt) and resumes with the reply.

On the reply the run goes on (:func:`resolve_approvals`): approved, the call
runs now with the arguments the model gave, read from the conversation the
server kept (never from the reply); anything else, it never runs and the model
is told the user declined. Only a run with a session can ask: the call must be
in history the server stored, or a client could approve a call it wrote itself.
A run without one (stateless Chat Completions) gets the refusal at once, and
the model carries on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.tools.client import ASK_USER, arguments_of

ASKED = "approval_asked"  # the assistant turn's metadata key: ids of calls asked about
DECLINED = "The user did not approve this call, so it did not run."
CANNOT_ASK = (
    "This tool runs only once the user approves the call, and this conversation has no "
    "session to ask in, so it did not run."
)
YES = frozenset(
    {"y", "yes", "ok", "okay", "sure", "approve", "approved", "allow", "allowed", "accept"}
    | {"accepted", "confirm", "confirmed", "true", "go"}
)
APPROVAL_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Let the agent make this call.",
        }
    },
    "required": ["approve"],
}


def needs_approval(tool: object) -> bool:
    """Whether ``tool`` (any run tool) runs only once the user approves each call."""
    options = getattr(tool, "options", None)
    return bool(getattr(options, "approval", False))


def approval_request(call: ToolCallPart) -> ToolCallPart:
    """The ``ask_user`` question (same call id) that asks the user to approve ``call``."""
    shown = orjson.dumps(arguments_of(call)).decode() if call.arguments else "{}"
    question = f"Allow {call.name} to run with {shown}? Answer yes or no."
    arguments = orjson.dumps({"question": question, "schema": APPROVAL_FORM}).decode()
    return ToolCallPart(id=call.id, name=ASK_USER.name, arguments=arguments)


def mark_asked(message: Message, asked: Sequence[ToolCallPart]) -> Message:
    """The assistant ``message`` marked (in its metadata, :data:`ASKED`) with the ids of
    its calls that wait for approval, so what reads the stored conversation can tell
    them apart from calls a client runs (:func:`as_asked`)."""
    metadata = {**(message.metadata or {}), ASKED: [c.id for c in asked]}
    return message.model_copy(update={"metadata": metadata})


def as_asked(message: Message, calls: Sequence[ToolCallPart]) -> list[ToolCallPart]:
    """``calls`` of the stored assistant ``message``, each one that waits for approval
    shown as the question asked (:func:`approval_request`), as the run's result showed it."""
    asked = set((message.metadata or {}).get(ASKED) or ())
    return [approval_request(c) if c.id in asked else c for c in calls]


def is_approval_request(call: ToolCallPart) -> bool:
    """Whether ``call`` is the question :func:`approval_request` asks (for a protocol
    with a way of its own to ask for an approval)."""
    if call.name != ASK_USER.name:
        return False
    return arguments_of(call).get("schema") == APPROVAL_FORM


def approved(reply: str) -> bool:
    """Whether the user's ``reply`` approves: a yes-word first, the form's answer
    (``{"approve": true}``), or an accepted form (``{"action": "accept", "content":
    {"approve": true}}``, MCP elicitation's); anything else declines."""
    try:
        answer = orjson.loads(reply)
    except orjson.JSONDecodeError:
        answer = None
    if isinstance(answer, dict) and "action" not in answer:  # the form's own answer
        return answer.get("approve") is True
    if isinstance(answer, dict):
        content = answer.get("content")
        chosen = content.get("approve", True) if isinstance(content, dict) else True
        return answer.get("action") == "accept" and chosen is True
    if isinstance(answer, bool):
        return answer
    words = reply.strip().lower().split()
    return bool(words) and words[0].strip(".,!:;'\"") in YES


def awaiting_approval(
    history: Sequence[Message], tools: Mapping[str, object]
) -> dict[str, ToolCallPart]:
    """The calls of the conversation's last assistant message that wait for approval:
    those the run asked about (marked by :func:`mark_asked`; a turn a client wrote
    has no mark, so a call it made up is never approved), of tools that need it,
    with no result yet (by call id)."""
    answered: set[str] = set()
    for message in reversed(history):
        if message.role == "tool":
            answered.update(p.call_id for p in message.parts if isinstance(p, ToolResultPart))
        elif message.role == "assistant":
            asked = set((message.metadata or {}).get(ASKED) or ())
            return {
                c.id: c
                for c in message.tool_calls
                if c.id in asked and c.id not in answered and needs_approval(tools.get(c.name))
            }
        else:
            return {}
    return {}


def resolve_approvals(
    input: Sequence[Message], waiting: Mapping[str, ToolCallPart]
) -> tuple[list[Message], list[ToolCallPart]]:
    """``input`` with each reply to a call in ``waiting`` taken as an approval: a declined
    call's reply becomes its result (:data:`DECLINED`), an approved call's is dropped; and
    the approved calls, to run now (their results then go where their replies were)."""
    resolved: list[Message] = []
    to_run: list[ToolCallPart] = []
    for message in input:
        if message.role != "tool" or not waiting:
            resolved.append(message)
            continue
        parts: list[Any] = []
        for part in message.parts:
            call = waiting.get(part.call_id) if isinstance(part, ToolResultPart) else None
            if call is None or not isinstance(part, ToolResultPart):
                parts.append(part)
            elif approved(part.content):
                to_run.append(call)
            else:
                parts.append(refusal(call, DECLINED))
        if parts:
            resolved.append(message.model_copy(update={"parts": parts}))
    return resolved, to_run


def refusal(call: ToolCallPart, reason: str) -> ToolResultPart:
    """The result the model sees for ``call`` that did not run."""
    return ToolResultPart(call_id=call.id, name=call.name, content=reason, is_error=True)
