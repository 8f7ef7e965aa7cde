"""Asking the user the questions of a waiting run (``ask_user``), each client its way.

- a handshake-era client that declared elicitation: an ``elicitation/create``
  form inside the call (over its session, or in stateless mode on the
  call's own stream, :mod:`adapters.mcp.backchannel`), and the run goes on;
- a 2026-07-28 client that declared elicitation: an ``input_required``
  result (that era's multi-round-trip form): one elicitation per question,
  keyed by its call id, and a ``requestState`` naming the session id and the
  questions; the
  client asks its user and retries the call with the answers (a
  ``requestState`` naming no waiting conversation of this caller is -32602);
- any other client: the question is the tool result (status
  ``input_required``) with the ``session_id``, and the next call with that
  ``session_id`` is the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agenthost.adapters.mcp.backchannel import channel_of, client_declares
from agenthost.agents import Message, ToolCallPart, ToolResultPart, question_of
from agenthost.agents.tools.client import form_of

ANSWER_KEY = "answer"
ANSWER_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}

Way = Literal["elicit", "input_required"]


def way_to_ask(ctx: ServerRequestContext[Any, Any], pending: Sequence[ToolCallPart]) -> Way | None:
    """How this client can be asked the pending questions (None: by the tool result)."""
    if not all(question_of(call) is not None for call in pending):
        return None  # a call that is not a question cannot be answered by a user
    if not client_declares(ctx, "elicitation"):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    return "elicit" if channel_of(ctx) is not None else None


async def elicit(
    ctx: ServerRequestContext[Any, Any], pending: Sequence[ToolCallPart]
) -> str | None:
    """Ask inside the call; the answer, or None when the user declined or cancelled
    (or the client answered with an error).

    A question asked with a form (``ask_user``'s ``schema``) is answered by the
    JSON of the user's action and content, whatever the action: the agent decides.
    """
    form = _form(pending)
    channel = channel_of(ctx)
    assert channel is not None  # way_to_ask chose "elicit"
    params = types.ElicitRequestFormParams(
        message=_questions(pending), requested_schema=form or ANSWER_SCHEMA
    )
    try:
        reply = await channel.request(types.ElicitRequest(params=params), types.ElicitResult)
    except MCPError:  # a client that cannot answer: the question becomes the result
        return None
    return _form_answer(reply) if form is not None else _accepted(reply)


def input_required(pending: Sequence[ToolCallPart], session_id: str) -> types.InputRequiredResult:
    """One elicitation per pending question, keyed by its call id; ``requestState``
    is the conversation's session id (kept under the caller's key)."""
    requests = {
        call.id: types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=question_of(call) or "", requested_schema=form_of(call) or ANSWER_SCHEMA
            )
        )
        for call in pending
    }
    return types.InputRequiredResult(
        input_requests=requests, request_state=request_state(session_id, pending)
    )


def request_state(session_id: str, pending: Sequence[ToolCallPart]) -> str:
    """``SESSION/CALL,CALL``: the conversation, and the questions this round asks
    (a retry must answer the questions the conversation is waiting for)."""
    return f"{session_id}/{','.join(call.id for call in pending)}"


def session_of_state(state: str) -> tuple[str, list[str]]:
    """The session id and the question ids a ``requestState`` names."""
    session_id, _, ids = state.rpartition("/")
    return (session_id or state), ids.split(",") if session_id else []


def answers_of(
    params: types.CallToolRequestParams, pending: Sequence[ToolCallPart]
) -> Message | None:
    """The tool message that a retried 2026-07-28 call's input responses make (one
    answer per pending question, by its call id); None when one is missing or
    declined. A question asked with a form gets the user's action and content,
    whatever it is. Responses for other keys are ignored."""
    responses = params.input_responses or {}
    results: list[ToolResultPart] = []
    for call in pending:
        response = responses.get(call.id)
        if not isinstance(response, types.ElicitResult):
            return None
        answer = _form_answer(response) if form_of(call) is not None else _accepted(response)
        if answer is None:
            return None
        results.append(ToolResultPart(call_id=call.id, name=call.name, content=answer))
    return Message(role="tool", parts=list(results))


def _form(pending: Sequence[ToolCallPart]) -> types.ElicitRequestedSchema | None:
    """The form of the one pending question that has one (several questions: one text answer)."""
    forms = [form for call in pending if (form := form_of(call)) is not None]
    return forms[0] if len(forms) == 1 and len(pending) == 1 else None


def _form_answer(reply: types.ElicitResult) -> str:
    return orjson.dumps({"action": reply.action, "content": reply.content}).decode()


def _questions(pending: Sequence[ToolCallPart]) -> str:
    return "\n".join(q for call in pending if (q := question_of(call)) is not None)


def _accepted(reply: types.ElicitResult) -> str | None:
    if reply.action != "accept" or not reply.content:
        return None
    answer = reply.content.get(ANSWER_KEY)
    return str(answer) if answer is not None else None
