"""One ``tools/call``: run the agent, stream progress, ask the user, map the outcome.

The conversation is ``SessionKey(agent, session_id, principal)`` in the
adapter's memory, never the MCP transport session. An agent that asks its
user (the built-in ``ask_user``) gets the answer in one of three ways:

- a handshake-era client with a back channel that declared elicitation:
  an ``elicitation/create`` request inside the call, and the run goes on;
- a 2026-07-28 client that declared elicitation: an ``input_required``
  result (the era's multi-round-trip form) whose ``requestState`` is the
  session id; the client retries the call with the answer;
- any other client: the question is the tool result (status
  ``input_required``) with the ``session_id``; the next call with that
  ``session_id`` is the answer.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from adapters.mcp import convert
from adapters.mcp.progress import Report, ThrottledProgress
from agents import (
    Agent,
    InMemorySession,
    MemoryManager,
    MessageInput,
    RunFinished,
    RunResult,
    Session,
    SessionKey,
    TextDelta,
    ToolCallPart,
    ToolCallStarted,
    answer_pending,
    question_of,
)
from agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.mcp")

ANSWER_KEY = "answer"
ANSWER_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}


@dataclass(frozen=True, slots=True)
class CallSettings:
    progress_interval: float


Result = types.CallToolResult | types.InputRequiredResult


async def call_agent(
    agent: Agent,
    params: types.CallToolRequestParams,
    ctx: ServerRequestContext[Any, Any],
    memory: MemoryManager,
    principal: str,
    settings: CallSettings,
) -> Result:
    """The result of calling ``agent``'s tool; agent failures are ``isError`` results."""
    arguments = convert.parse_arguments(params.arguments)
    session_id = arguments.session_id or params.request_state
    try:
        return await _converse(
            agent, arguments.message, session_id, params, ctx, memory, principal, settings
        )
    except MCPError:
        raise
    except Exception as exc:
        result = convert.error_result(exc)
        if result is None:
            logger.exception("agent %r failed", agent.name)
            result = convert.internal_error_result(exc)
        return result


async def _converse(
    agent: Agent,
    message: str,
    session_id: str | None,
    params: types.CallToolRequestParams,
    ctx: ServerRequestContext[Any, Any],
    memory: MemoryManager,
    principal: str,
    settings: CallSettings,
) -> Result:
    session: Session
    if session_id is None:
        session = InMemorySession()
        input: MessageInput = message
    else:
        session = ManagedSession(memory, SessionKey(agent.name, session_id, principal))
        waiting = convert.pending_in(await session.load())
        answer = _answered(params) if params.request_state else None
        if waiting and answer is None and params.request_state:
            # The client retried without an answer (declined or cancelled).
            return convert.to_question(waiting, session_id)
        input = answer_pending(waiting, answer or message) if waiting else message
    progress = ThrottledProgress(_reporter(ctx), settings.progress_interval)
    while True:
        result = await _run(agent, input, session, progress, streamed=_wants_progress(ctx))
        if not result.pending:
            return convert.to_result(result.output, session_id)
        way = _way_to_ask(ctx, result.pending)
        if way == "elicit":
            reply = await _elicit(ctx, result.pending)
            if reply is not None:
                input = answer_pending(result.pending, reply)
                continue
        if session_id is None:
            # Keep the waiting turn so that an answer can resume it.
            session_id = secrets.token_urlsafe(16)
            assert isinstance(session, InMemorySession)
            await memory.append(SessionKey(agent.name, session_id, principal), session.messages)
        if way == "input_required":
            return _input_required(result.pending, session_id)
        return convert.to_question(result.pending, session_id)


async def _run(
    agent: Agent,
    input: MessageInput,
    session: Session,
    progress: ThrottledProgress,
    *,
    streamed: bool,
) -> RunResult:
    if not streamed:
        return await agent.run(input, session=session)
    result: RunResult | None = None
    updates = agent.run_stream(input, session=session)
    try:
        async for update in updates:
            if isinstance(update, TextDelta):
                await progress.text(update.text)
            elif isinstance(update, ToolCallStarted):
                await progress.tick()
            elif isinstance(update, RunFinished):
                result = update.result
    finally:
        # Closing the generator is what stops the model call and tools on a cancel.
        await updates.aclose()
    await progress.flush()
    if result is None:
        raise RuntimeError(f"agent {agent.name!r} ended without a result")
    return result


def _wants_progress(ctx: ServerRequestContext[Any, Any]) -> bool:
    # Without a token there is nobody to report to: run unstreamed (cheaper).
    return progress_token_from_params(ctx.params) is not None


def _reporter(ctx: ServerRequestContext[Any, Any]) -> Report:
    async def report(progress: float, message: str | None) -> None:
        await ctx.session.report_progress(progress, None, message)

    return report


def _way_to_ask(
    ctx: ServerRequestContext[Any, Any], pending: list[ToolCallPart]
) -> Literal["elicit", "input_required"] | None:
    """How this client can be asked the pending questions (None: by the tool result)."""
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not all(question_of(c) is not None for c in pending):
        return None
    if not ctx.session.check_client_capability(wanted):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    return "elicit" if ctx.session.can_send_request else None


def _questions(pending: list[ToolCallPart]) -> str:
    return "\n".join(q for call in pending if (q := question_of(call)) is not None)


async def _elicit(ctx: ServerRequestContext[Any, Any], pending: list[ToolCallPart]) -> str | None:
    reply = await ctx.session.elicit_form(
        _questions(pending), ANSWER_SCHEMA, related_request_id=ctx.request_id
    )
    return _accepted(reply)


def _input_required(pending: list[ToolCallPart], session_id: str) -> types.InputRequiredResult:
    """The 2026-07-28 way: the client asks its user and retries with the answer."""
    form = types.ElicitRequestFormParams(
        message=_questions(pending), requested_schema=ANSWER_SCHEMA
    )
    request = types.ElicitRequest(params=form)
    return types.InputRequiredResult(input_requests={ANSWER_KEY: request}, request_state=session_id)


def _answered(params: types.CallToolRequestParams) -> str | None:
    response = (params.input_responses or {}).get(ANSWER_KEY)
    return _accepted(response) if isinstance(response, types.ElicitResult) else None


def _accepted(reply: types.ElicitResult) -> str | None:
    if reply.action != "accept" or not reply.content:
        return None
    answer = reply.content.get(ANSWER_KEY)
    return str(answer) if answer is not None else None
