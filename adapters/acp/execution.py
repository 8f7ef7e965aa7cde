"""Drive one agent run into an ACP run record: status changes, messages, events.

The agent's text arrives as ``message.part`` events while it is generated;
its own tool calls appear as parts carrying trajectory metadata. A run that
ends waiting for its client becomes ``awaiting`` with the question in its
await request; a cancelled task becomes ``cancelled``.

``sync`` runs (and resumed ``awaiting`` runs) run here, in a task of the
adapter's own; ``async`` and ``stream`` runs are durable runs
(:mod:`agenthost.adapters.acp.detached`) written by the same
:class:`RunWriter`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from acp_sdk.models import (
    GenericEvent,
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
from acp_sdk.models.common import AnyModel

from agenthost.adapters.acp.convert import (
    agent_role,
    append_part,
    question_message,
    text_part,
    tool_finished_part,
    tool_started_part,
)
from agenthost.adapters.acp.errors import to_error
from agenthost.adapters.acp.runs import RunRecord
from agenthost.adapters.acp.shared import SharedRuns
from agenthost.adapters.acp.timeline import TimelineSession
from agenthost.adapters.durable import Discarded, LoggedUpdate
from agenthost.adapters.durable.steps import Progress
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import (
    Agent,
    AgentError,
    ErrorKind,
    MemoryManager,
    RunResult,
    TextDelta,
    ToolCallPart,
    ToolResultPart,
    kind_of,
)
from agenthost.agents import Message as AgentMessage

logger = logging.getLogger("agenthost.acp")


def start(
    record: RunRecord,
    agent: Agent,
    memory: MemoryManager,
    input: Sequence[AgentMessage],
    shared: SharedRuns | None = None,
) -> None:
    """Start (or resume) the run's work as a task of its own.

    With ``shared`` runs, the run's snapshot is written when it starts and
    when it settles, for the other replicas.
    """
    record.run.status = RunStatus.IN_PROGRESS
    record.run.await_request = None
    record.pending = ()
    record.durable = False
    record.work(
        asyncio.create_task(
            _execute(record, agent, memory, list(input), shared),
            name=f"acp-run-{record.run_id}",
        )
    )


async def _execute(
    record: RunRecord,
    agent: Agent,
    memory: MemoryManager,
    input: list[AgentMessage],
    shared: SharedRuns | None,
) -> None:
    try:
        if shared is None:
            await _work(record, agent, memory, input)
        else:
            async with shared.working(record):
                await _work(record, agent, memory, input)
    finally:
        if shared is not None:
            try:
                await asyncio.shield(shared.save(record))
            except Exception:
                logger.exception("ACP run %s: its snapshot could not be saved", record.run_id)


async def _work(
    record: RunRecord, agent: Agent, memory: MemoryManager, input: list[AgentMessage]
) -> None:
    run = record.run
    record.emit(RunInProgressEvent(run=run))
    writer = RunWriter(record, agent.name)
    session = TimelineSession(memory, record.session)
    try:
        await writer.consume(agent.run_stream(input, session=session))
    except asyncio.CancelledError:
        # The task is ours and nobody awaits its cancellation: record it and end.
        writer.cancelled()
    except Exception as exc:
        if kind_of(exc) is ErrorKind.CANCELLED:
            writer.cancelled()
            return
        if not isinstance(exc, AgentError):
            logger.exception("ACP run %s failed", run.run_id)
        writer.failed(exc)


class RunWriter(RunConsumer[None]):
    """Builds the agent's output message part by part, emitting the run's events."""

    def __init__(self, record: RunRecord, agent: str) -> None:
        super().__init__(agent)
        self.record = record
        self.role = agent_role(agent)
        self.message: Message | None = None
        self.progress = Progress()
        self.kept: tuple[int, str | None] = (0, None)
        """The output message at the last finished step: its part count, and the
        content of its last part then."""

    async def feed(self, update: LoggedUpdate) -> None:
        """Write one update of a durable run (its result goes to ``on_finished`` or
        ``on_pending`` instead)."""
        if isinstance(update, TextDelta):
            await self.on_text(update.text)
        else:
            await self._other(update)
        if self.progress.add(update):
            parts = self.message.parts if self.message is not None else []
            self.kept = (len(parts), parts[-1].content if parts else None)

    async def on_discarded(self, lost: Discarded) -> Sequence[None]:
        """The replica running the run died mid-step: what that step had added to the
        output message goes, and a ``generic`` event says what was discarded (the
        ``message.part`` events already sent stay in the log)."""
        if self.message is not None:
            count, content = self.kept
            del self.message.parts[count:]
            if count:
                self.message.parts[-1].content = content
        discarded = {"type": "discarded", "text": lost.text, "tool_calls": list(lost.calls)}
        self.record.emit(GenericEvent(generic=AnyModel.model_validate(discarded)))
        return ()

    async def on_text(self, text: str) -> Sequence[None]:
        self._part(text_part(text))
        await self.record.room()  # a stream that is not read holds the run back
        return ()

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[None]:
        self._part(tool_started_part(call))
        await self.record.room()
        return ()

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[None]:
        self._part(tool_finished_part(result))
        await self.record.room()
        return ()

    async def on_pending(self, result: RunResult) -> Sequence[None]:
        self._complete()
        record, run = self.record, self.record.run
        record.pending = list(result.pending)
        run.await_request = MessageAwaitRequest(
            message=question_message(self.agent, result.pending)
        )
        record.settle(RunStatus.AWAITING)
        record.emit(RunAwaitingEvent(run=run))
        return ()

    async def on_finished(self, result: RunResult) -> Sequence[None]:
        self._complete()
        self.record.settle(RunStatus.COMPLETED)
        self.record.emit(RunCompletedEvent(run=self.record.run))
        return ()

    def failed(self, exc: BaseException) -> None:
        self.record.run.error = to_error(exc)[1]
        self.record.settle(RunStatus.FAILED)
        self.record.emit(RunFailedEvent(run=self.record.run))

    def cancelled(self) -> None:
        self._complete()
        self.record.settle(RunStatus.CANCELLED)
        self.record.emit(RunCancelledEvent(run=self.record.run))

    def _part(self, part: MessagePart) -> None:
        if self.message is None:
            self.message = Message(role=self.role, parts=[], completed_at=None)
            self.record.run.output.append(self.message)
            self.record.emit(MessageCreatedEvent(message=self.message))
        append_part(self.message, part)
        self.record.emit(MessagePartEvent(part=part))

    def _complete(self) -> None:
        if self.message is not None:
            self.message.completed_at = datetime.now(UTC)
            self.record.emit(MessageCompletedEvent(message=self.message))
            self.message = None
