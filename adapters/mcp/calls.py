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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from agenthost.adapters.mcp import asking, convert
from agenthost.adapters.mcp.errors import error_result
from agenthost.adapters.mcp.inputs import Parsed, ToolInput
from agenthost.adapters.mcp.logs import RunLog
from agenthost.adapters.mcp.progress import ThrottledProgress
from agenthost.adapters.mcp.sampling import SampleNeeded, answers_of_state, sampler_for
from agenthost.adapters.runs import RunConsumer, pending_in, resume_input
from agenthost.agents import (
    Agent,
    AgentError,
    InMemorySession,
    MemoryManager,
    Message,
    MessageInput,
    RunResult,
    Session,
    SessionKey,
    SubAgentUpdate,
    ToolCallPart,
    ToolResultPart,
)
from agenthost.agents.messages import Part
from agenthost.agents.models.sampling import current_sampler
from agenthost.agents.results import (
    RunUpdate,
    ToolCallFinished,
    ToolCallStarted,
    tool_progress,
)
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
    log: RunLog
    # A task's run: its request is answered, so no progress, log or sampling goes
    # back on it; a question is an input_required result (the task's status).
    detached: bool = False
    tool_input: ToolInput = ToolInput()  # noqa: RUF009 - frozen, shared safely

    async def result(self) -> Result:
        """The tool result; agent failures are ``isError`` results, bad arguments MCP errors."""
        arguments = self.tool_input.parse(self.params.arguments)
        # An mcp:sampling agent's model is this client's, when it can lend it
        # (2026-07-28: by input requests, the answers so far replayed).
        answers = answers_of_state(self.params)
        sampler = None if self.detached else sampler_for(self.ctx, answers or ())
        token = current_sampler.set(sampler)
        try:
            return await self._result(arguments, sampled=answers is not None)
        except SampleNeeded as need:
            return need.result()
        finally:
            current_sampler.reset(token)

    async def _result(self, arguments: Parsed, *, sampled: bool = False) -> Result:
        try:
            state = None if sampled else self.params.request_state
            asked = asking.session_of_state(state) if state else None
            return await self._converse(
                arguments.input, arguments.session_id or (asked[0] if asked else None), asked
            )
        except (MCPError, SampleNeeded):
            raise
        except Exception as exc:
            if not isinstance(exc, AgentError):
                if self.detached:
                    raise  # a task's run that crashed: the task fails (a protocol error)
                logger.exception("agent %r failed", self.agent.name)
            await self.log.failed(exc)
            return error_result(exc)

    async def _converse(
        self,
        message: MessageInput,
        session_id: str | None,
        asked: tuple[str, list[str]] | None = None,
    ) -> Result:
        conversation = Conversation(self.agent.name, self.memory, self.principal, self.params)
        opened = await conversation.open(message, session_id, asked)
        if not isinstance(opened, Opening):
            return opened
        input = opened.input
        progress = ThrottledProgress(self._report, self.progress_interval)
        while True:
            result = await self._run(input, opened.session, progress)
            if not result.pending:
                return convert.to_result(result.output, opened.session_id, answer_parts(result))
            way = asking.way_to_ask(self.ctx, result.pending)
            if self.detached and way == "elicit":
                way = None  # a task's request is answered: it asks by its input_required status
            if way == "elicit" and (answered := await asking.ask_inside(self.ctx, result.pending)):
                input = answered
                continue
            if way != "input_required" and (refused := asking.refusals(result.pending)):
                input = refused  # roots or a model answer this client cannot give
                continue
            return await conversation.waiting(opened, result.pending, way)

    async def _run(
        self, input: MessageInput, session: Session, progress: ThrottledProgress
    ) -> RunResult:
        has_token = not self.detached and progress_token_from_params(self.ctx.params) is not None
        if not has_token and not self.log.wants("info"):
            # Nobody to report partial output to: an unstreamed run is cheaper.
            ran = await self.agent.run(input, session=session)
            for message in ran.new_messages:
                for part in message.parts:
                    if isinstance(part, ToolResultPart):
                        await self.log.tool_finished(part)
            return ran
        result = await _Progress(
            self.agent.name, progress if has_token else None, self.log
        ).consume(self.agent.run_stream(input, session=session))
        assert result is not None  # failures propagate
        return result

    async def _report(self, progress: float, message: str | None) -> None:
        await self.ctx.session.report_progress(progress, None, message)


@dataclass(slots=True)
class Opening:
    """A call's run, ready to go: its input, its conversation, and the session id
    it is kept under (None: kept nowhere unless the run ends up waiting)."""

    input: MessageInput
    session: Session
    session_id: str | None


@dataclass(frozen=True, slots=True)
class Conversation:
    """Where a call's run stands in its conversation, apart from the request that
    made it (so that a task's run can be rebuilt on any replica)."""

    agent: str
    memory: MemoryManager
    principal: str
    params: types.CallToolRequestParams

    async def open(
        self,
        message: MessageInput,
        session_id: str | None,
        asked: tuple[str, list[str]] | None = None,
    ) -> Opening | Result:
        """The run's input and session; the result instead when there is nothing to
        run (an answer declined: the question stays open)."""
        if session_id is None:
            return Opening(message, InMemorySession(), None)
        session = ManagedSession(self.memory, self.key(session_id))
        waiting = pending_in(await session.load())
        if asked is not None and session_id == asked[0]:
            # A 2026-07-28 retry: the answers are in the input responses.
            if not waiting or [call.id for call in waiting] != asked[1]:
                raise MCPError(
                    types.INVALID_PARAMS,
                    "requestState names no questions this conversation is waiting for",
                )
            answers = asking.answers_of(self.params, waiting)
            if answers is None:  # declined, or not all answered: the question stays open
                return convert.to_question(waiting, session_id)
            return Opening(answers, session, session_id)
        turn = message if isinstance(message, Message) else Message.user(str(message))
        return Opening(resume_input(waiting, turn), session, session_id)

    async def waiting(
        self, opened: Opening, pending: Sequence[ToolCallPart], way: asking.Way | None
    ) -> Result:
        """The result of a run that waits for its client: the questions, under the
        conversation's session id (a new one keeps a call's turn that had none)."""
        session_id = opened.session_id
        if session_id is None:
            session_id = secrets.token_urlsafe(16)
            assert isinstance(opened.session, InMemorySession)
            await self.memory.append(self.key(session_id), opened.session.messages)
        if way == "input_required":
            return asking.input_required(pending, session_id)
        return convert.to_question(pending, session_id)

    def key(self, session_id: str) -> SessionKey:
        return SessionKey(self.agent, session_id, self.principal)


def answer_parts(result: RunResult) -> Sequence[Part]:
    """The parts of the run's last message when it is the agent's answer."""
    last = result.new_messages[-1] if result.new_messages else None
    return last.parts if last is not None and last.role == "assistant" else ()


class _Progress(RunConsumer[None]):
    """A run's text and tool calls as throttled progress notifications (when the
    client sent a progress token) and as log messages (at the levels it wants)."""

    def __init__(self, agent: str, progress: ThrottledProgress | None, log: RunLog) -> None:
        super().__init__(agent)
        self.progress = progress
        self.log = log

    async def on_text(self, text: str) -> Sequence[None]:
        if self.progress is not None:
            await self.progress.text(text)
        return ()

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[None]:
        await self.log.tool_started(call)
        if self.progress is not None:
            await self.progress.tick()
        return ()

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[None]:
        await self.log.tool_finished(result)
        return ()

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[None]:
        await self.log.worker(update.agent)
        inner: RunUpdate = update
        while isinstance(inner, SubAgentUpdate):
            worker, inner = inner.agent, inner.update
        if isinstance(inner, ToolCallStarted):
            await self.log.tool_started(inner.call, by=worker)
        elif isinstance(inner, ToolCallFinished):
            await self.log.tool_finished(inner.result, by=worker)
        if self.progress is not None and tool_progress(update) is not None:
            # A tool of an agent working for it starts.
            await self.progress.tick()
        return ()

    async def on_finished(self, result: RunResult) -> Sequence[None]:
        if self.progress is not None:
            await self.progress.flush()
        return ()
