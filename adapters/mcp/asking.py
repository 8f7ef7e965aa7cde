"""Asking the user the questions of a waiting run (``ask_user``), each client its way.

- a handshake-era client with a back channel that declared elicitation:
  an ``elicitation/create`` form inside the call, and the run goes on;
- a 2026-07-28 client that declared elicitation: an ``input_required``
  result (that era's multi-round-trip form) whose ``requestState`` is the
  session id; the client asks its user and retries the call with the answer;
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
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agenthost.agents import ToolCallPart, question_of
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
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not ctx.session.check_client_capability(wanted):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    return "elicit" if ctx.session.can_send_request else None


async def elicit(
    ctx: ServerRequestContext[Any, Any], pending: Sequence[ToolCallPart]
) -> str | None:
    """Ask inside the call; the answer, or None when the user declined or cancelled.

    A question asked with a form (``ask_user``'s ``schema``) is answered by the
    JSON of the user's action and content, whatever the action: the agent decides.
    """
    form = _form(pending)
    reply = await ctx.session.elicit_form(
        _questions(pending), form or ANSWER_SCHEMA, related_request_id=ctx.request_id
    )
    return _form_answer(reply) if form is not None else _accepted(reply)


def input_required(pending: Sequence[ToolCallPart], session_id: str) -> types.InputRequiredResult:
    form = types.ElicitRequestFormParams(
        message=_questions(pending), requested_schema=_form(pending) or ANSWER_SCHEMA
    )
    request = types.ElicitRequest(params=form)
    return types.InputRequiredResult(input_requests={ANSWER_KEY: request}, request_state=session_id)


def answer_of(
    params: types.CallToolRequestParams, pending: Sequence[ToolCallPart] = ()
) -> str | None:
    """The answer a retried 2026-07-28 call carries, if the user gave one."""
    response = (params.input_responses or {}).get(ANSWER_KEY)
    if not isinstance(response, types.ElicitResult):
        return None
    return _form_answer(response) if _form(pending) is not None else _accepted(response)


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
