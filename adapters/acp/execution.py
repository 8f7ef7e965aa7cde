"""Drive one agent run into an ACP run record: status changes, messages, events.

The agent's text arrives as ``message.part`` events while it is generated;
its own tool calls appear as parts carrying trajectory metadata. A run that
ends waiting for its client becomes ``awaiting`` with the question in its
await request; a cancelled task becomes ``cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from acp_sdk.models import (
    Error,
    Message,
    MessageAwaitRequest,
    MessageCompletedEvent,
    MessageCreatedEvent,
    MessagePart,
    MessagePartEvent,
    RunAwaitingEvent,
    RunCancelledEvent,
    RunCompletedEvent,
    RunFailedEvent,
    RunInProgressEvent,
    RunStatus,
)

from agenthost.adapters.acp.convert import (
    agent_role,
    append_part,
    error_code,
    question_message,
    text_part,
    tool_finished_part,
    tool_started_part,
)
from agenthost.adapters.acp.runs import RunRecord
from agenthost.agents import (
    Agent,
    AgentError,
    MemoryManager,
    RunFinished,
    RunResult,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from agenthost.agents import Message as AgentMessage
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.acp")


def start(
    record: RunRecord, agent: Agent, memory: MemoryManager, input: Sequence[AgentMessage]
) -> None:
    """Start (or resume) the run's work as a task of its own."""
    record.run.status = RunStatus.IN_PROGRESS
    record.run.await_request = None
    record.pending = []
    record.task = asyncio.create_task(
        _execute(record, agent, memory, list(input)), name=f"acp-run-{record.run.run_id}"
    )


async def _execute(
    record: RunRecord, agent: Agent, memory: MemoryManager, input: list[AgentMessage]
) -> None:
    run = record.run
    record.emit(RunInProgressEvent(run=run))
    writer = _MessageWriter(record, agent.name)
    try:
        result: RunResult | None = None
        session = ManagedSession(memory, record.session)
        async for update in agent.run_stream(input, session=session):
            if isinstance(update, TextDelta):
                writer.part(text_part(update.text))
            elif isinstance(update, ToolCallStarted):
                writer.part(tool_started_part(update.call))
            elif isinstance(update, ToolCallFinished):
                writer.part(tool_finished_part(update.result))
            elif isinstance(update, RunFinished):
                result = update.result
        if result is None:
            raise AgentError(f"agent {agent.name!r} ended without a result")
        writer.complete()
        if result.awaiting_client:
            record.pending = list(result.pending)
            run.await_request = MessageAwaitRequest(
                message=question_message(agent.name, result.pending)
            )
            record.settle(RunStatus.AWAITING)
            record.emit(RunAwaitingEvent(run=run))
        else:
            record.settle(RunStatus.COMPLETED)
            record.emit(RunCompletedEvent(run=run))
    except asyncio.CancelledError:
        # The task is ours and nobody awaits its cancellation: record it and end.
        writer.complete()
        record.settle(RunStatus.CANCELLED)
        record.emit(RunCancelledEvent(run=run))
    except Exception as exc:
        if not isinstance(exc, AgentError):
            logger.exception("ACP run %s failed", run.run_id)
        code, message = error_code(exc)
        run.error = Error(code=code, message=message)
        record.settle(RunStatus.FAILED)
        record.emit(RunFailedEvent(run=run))


class _MessageWriter:
    """Builds the agent's output message part by part, emitting its events."""

    def __init__(self, record: RunRecord, agent: str) -> None:
        self.record = record
        self.role = agent_role(agent)
        self.message: Message | None = None

    def part(self, part: MessagePart) -> None:
        if self.message is None:
            self.message = Message(role=self.role, parts=[], completed_at=None)
            self.record.run.output.append(self.message)
            self.record.emit(MessageCreatedEvent(message=self.message))
        append_part(self.message, part)
        self.record.emit(MessagePartEvent(part=part))

    def complete(self) -> None:
        if self.message is not None:
            self.message.completed_at = datetime.now(UTC)
            self.record.emit(MessageCompletedEvent(message=self.message))
            self.message = None
