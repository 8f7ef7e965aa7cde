"""One ``tools/call``: run the agent, stream progress, ask the user, map the outcome.

The conversation is ``SessionKey(agent, session_id, principal)`` in the
adapter's memory, never the MCP transport session. Without a ``session_id``
the call is independent: its turn is kept only if the agent ends up waiting
for an answer (under a new ``session_id`` the result names). How the user
is asked: :mod:`adapters.mcp.asking`.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from agenthost.adapters.mcp import asking, convert
from agenthost.adapters.mcp.progress import ThrottledProgress
from agenthost.agents import (
    Agent,
    InMemorySession,
    MemoryManager,
    MessageInput,
    RunFinished,
    RunResult,
    Session,
    SessionKey,
    TextDelta,
    answer_pending,
)
from agenthost.agents.results import tool_progress
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.mcp")

Result = types.CallToolResult | types.InputRequiredResult


@dataclass(frozen=True, slots=True)
class AgentCall:
    """A call of ``agent``'s tool by ``principal``."""

    agent: Agent
    params: types.CallToolRequestParams
    ctx: ServerRequestContext[Any, Any]
    memory: MemoryManager
    principal: str
    progress_interval: float

    async def result(self) -> Result:
        """The tool result; agent failures are ``isError`` results, bad arguments MCP errors."""
        arguments = convert.parse_arguments(self.params.arguments)
        try:
            return await self._converse(
                arguments.message, arguments.session_id or self.params.request_state
            )
        except MCPError:
            raise
        except Exception as exc:
            result = convert.error_result(exc)
            if result is None:
                logger.exception("agent %r failed", self.agent.name)
                result = convert.internal_error_result(exc)
            return result

    async def _converse(self, message: str, session_id: str | None) -> Result:
        session: Session
        input: MessageInput = message
        if session_id is None:
            session = InMemorySession()
        else:
            session = ManagedSession(self.memory, self._key(session_id))
            waiting = convert.pending_in(await session.load())
            if waiting and self.params.request_state:
                # A 2026-07-28 retry: the answer is in the input responses, if given.
                answer = asking.answer_of(self.params)
                if answer is None:
                    return convert.to_question(waiting, session_id)
                message = answer
            input = answer_pending(waiting, message) if waiting else message
        progress = ThrottledProgress(self._report, self.progress_interval)
        while True:
            result = await self._run(input, session, progress)
            if not result.pending:
                return convert.to_result(result.output, session_id)
            way = asking.way_to_ask(self.ctx, result.pending)
            if way == "elicit" and (reply := await asking.elicit(self.ctx, result.pending)):
                input = answer_pending(result.pending, reply)
                continue
            if session_id is None:
                # Keep the waiting turn so that an answer can resume it.
                session_id = secrets.token_urlsafe(16)
                assert isinstance(session, InMemorySession)
                await self.memory.append(self._key(session_id), session.messages)
            if way == "input_required":
                return asking.input_required(result.pending, session_id)
            return convert.to_question(result.pending, session_id)

    async def _run(
        self, input: MessageInput, session: Session, progress: ThrottledProgress
    ) -> RunResult:
        if progress_token_from_params(self.ctx.params) is None:
            # Nobody to report partial output to: an unstreamed run is cheaper.
            return await self.agent.run(input, session=session)
        result: RunResult | None = None
        updates = self.agent.run_stream(input, session=session)
        try:
            async for update in updates:
                if isinstance(update, TextDelta):
                    await progress.text(update.text)
                elif tool_progress(update) is not None:
                    # A tool starts (the agent's own, or one of an agent working for it).
                    await progress.tick()
                elif isinstance(update, RunFinished):
                    result = update.result
        finally:
            # Closing the generator is what stops the model call and tools on a cancel.
            await updates.aclose()
        await progress.flush()
        if result is None:
            raise RuntimeError(f"agent {self.agent.name!r} ended without a result")
        return result

    async def _report(self, progress: float, message: str | None) -> None:
        await self.ctx.session.report_progress(progress, None, message)

    def _key(self, session_id: str) -> SessionKey:
        return SessionKey(self.agent.name, session_id, self.principal)
