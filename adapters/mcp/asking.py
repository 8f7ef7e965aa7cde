"""Asking the client what a waiting run needs, each client its way.

A run waits on client calls: ``ask_user`` questions (MCP elicitation),
``list_roots`` (``roots/list``) and ``ask_client_model`` (``sampling/createMessage``).
Each needs the client capability of its kind; a run waiting on anything
else (an OpenAI-style client tool) is not asked over MCP.

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
  ``session_id`` is the answer; a ``list_roots`` or ``ask_client_model``
  call the client cannot answer gets an error result at once and the run
  goes on (:func:`refusals`).

In both the handshake era and 2026-07-28, roots and model answers come back
to the agent as its calls' results: the roots as a JSON list of ``{uri,
name}``, the model's answer as its text.
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
from agenthost.agents import Message, ToolCallPart, ToolResultPart, answer_pending, question_of
from agenthost.agents.models.sampling import DEFAULT_MAX_TOKENS
from agenthost.agents.tools.client import (
    ASK_CLIENT_MODEL,
    ASK_USER,
    LIST_ROOTS,
    arguments_of,
    form_of,
)

ANSWER_KEY = "answer"
ANSWER_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}

Way = Literal["elicit", "input_required"]
Need = Literal["elicitation", "roots", "sampling"]
NEEDS: dict[str, Need] = {
    ASK_USER.name: "elicitation",
    LIST_ROOTS.name: "roots",
    ASK_CLIENT_MODEL.name: "sampling",
}
"""The client capability each client call of the runtime needs."""


def way_to_ask(ctx: ServerRequestContext[Any, Any], pending: Sequence[ToolCallPart]) -> Way | None:
    """How this client can be asked the pending calls (None: it cannot be)."""
    needs = {NEEDS.get(call.name) for call in pending}
    if None in needs:
        return None  # a client tool MCP has no request for
    if not all(client_declares(ctx, need) for need in needs if need is not None):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    return "elicit" if channel_of(ctx) is not None else None


def refusals(pending: Sequence[ToolCallPart]) -> Message | None:
    """Error results for a run whose pending calls include roots or model requests
    the client cannot answer (None when they are all questions: those become the
    tool result)."""
    if any(c.name not in NEEDS for c in pending) or all(c.name == ASK_USER.name for c in pending):
        return None
    results = [
        ToolResultPart(
            call_id=call.id,
            name=call.name,
            content=f"the client cannot answer {call.name} (it declared no "
            f"{NEEDS.get(call.name, call.name)} capability, or cannot be asked here)",
            is_error=True,
        )
        for call in pending
    ]
    return Message(role="tool", parts=list(results))


async def ask_inside(
    ctx: ServerRequestContext[Any, Any], pending: Sequence[ToolCallPart]
) -> Message | None:
    """Ask the pending calls inside the call; their results, or None when a
    question went unanswered (declined, cancelled, or the client refused)."""
    if all(call.name == ASK_USER.name for call in pending):
        reply = await elicit(ctx, pending)
        return answer_pending(pending, reply) if reply is not None else None
    channel = channel_of(ctx)
    assert channel is not None  # way_to_ask chose "elicit"
    results: list[ToolResultPart] = []
    for call in pending:
        if call.name == ASK_USER.name:
            answer = await elicit(ctx, [call])
        else:
            try:
                response = await channel.request(request_of(call), _RESULT_TYPES[call.name])
            except MCPError:
                return None
            answer = content_of(response)
        if answer is None:
            return None
        results.append(ToolResultPart(call_id=call.id, name=call.name, content=answer))
    return Message(role="tool", parts=list(results))


def request_of(call: ToolCallPart) -> types.InputRequest:
    """The MCP request a pending client call is."""
    if call.name == LIST_ROOTS.name:
        return types.ListRootsRequest()
    if call.name == ASK_CLIENT_MODEL.name:
        arguments = arguments_of(call)
        text = types.TextContent(type="text", text=str(arguments.get("prompt") or ""))
        max_tokens = arguments.get("max_tokens")
        return types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=text)],
                max_tokens=max_tokens if isinstance(max_tokens, int) else DEFAULT_MAX_TOKENS,
            )
        )
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=question_of(call) or "", requested_schema=form_of(call) or ANSWER_SCHEMA
        )
    )


_RESULT_TYPES: dict[str, type[types.ListRootsResult] | type[types.CreateMessageResult]] = {
    LIST_ROOTS.name: types.ListRootsResult,
    ASK_CLIENT_MODEL.name: types.CreateMessageResult,
}


def content_of(response: Any) -> str | None:
    """A roots or model answer as the call's result text."""
    if isinstance(response, types.ListRootsResult):
        roots = [{"uri": str(root.uri), "name": root.name} for root in response.roots]
        return orjson.dumps(roots).decode()
    if isinstance(response, types.CreateMessageResult | types.CreateMessageResultWithTools):
        content = response.content
        pieces = content if isinstance(content, list) else [content]
        return "".join(p.text for p in pieces if isinstance(p, types.TextContent))
    return None


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
    """One input request per pending call, keyed by its call id; ``requestState``
    is the conversation's session id (kept under the caller's key)."""
    requests: types.InputRequests = {call.id: request_of(call) for call in pending}
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
        if call.name != ASK_USER.name:
            kind = _RESULT_TYPES.get(call.name)
            answer = content_of(response) if kind and isinstance(response, kind) else None
        elif not isinstance(response, types.ElicitResult):
            return None
        else:
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


PROMPT_ARGUMENTS_KEY = "arguments"
"""The input request key of a prompt's missing ``elicit`` arguments."""


async def prompt_arguments(
    ctx: ServerRequestContext[Any, Any],
    params: types.GetPromptRequestParams,
    form: types.ElicitRequestFormParams,
) -> dict[str, str] | types.InputRequiredResult | None:
    """A prompt's arguments the user gave when asked (merged into the request's);
    an ``input_required`` result to ask them (2026-07-28); None: they could not
    be asked, or were not given (the request goes on without them)."""
    if not client_declares(ctx, "elicitation"):
        return None
    given = dict(params.arguments or {})
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        response = (params.input_responses or {}).get(PROMPT_ARGUMENTS_KEY)
        if not isinstance(response, types.ElicitResult):
            request = types.ElicitRequest(params=form)
            return types.InputRequiredResult(input_requests={PROMPT_ARGUMENTS_KEY: request})
        reply: types.ElicitResult | None = response
    elif (channel := channel_of(ctx)) is not None:
        try:
            reply = await channel.request(types.ElicitRequest(params=form), types.ElicitResult)
        except MCPError:
            reply = None
    else:
        return None
    if reply is None or reply.action != "accept" or not reply.content:
        return None
    wanted = form.requested_schema.get("properties") or {}
    answers = {k: str(v) for k, v in reply.content.items() if k in wanted and v is not None}
    return {**answers, **given}
