"""``async`` and ``stream`` runs as durable runs: they outlive the replica that started them.

Such a run's work is a durable run (:mod:`agenthost.adapters.durable`) of
kind :data:`PROTOCOL`: its record keeps what any replica needs to run it
again (the agent, the principal, the session id and the input messages),
and every update it yields is in the run log beside the ACP run record
this adapter keeps (:mod:`agenthost.adapters.acp.runs`), which a
:class:`~agenthost.adapters.acp.execution.RunWriter` builds from the same
updates. The run's task is the durable run's task: a cancel, or a
``stream`` client leaving, stops it as before.

When the replica running it dies, its lease expires and another replica
claims it (the core's claim and resume): :class:`DetachedRuns` rebuilds the
ACP run there from the log (its events, its output so far), the lost
partial step discarded (the output message loses what that step had added,
and a ``generic`` event says what was discarded), and goes on from the last
finished step, a recorded tool result never run again. When the run ends,
:meth:`DetachedRuns.settled` writes its final state (``completed`` with the
whole output, ``awaiting``, ``failed`` or ``cancelled``) into the run store
and the shared snapshot, so ``GET /runs/{id}`` and ``GET /runs/{id}/events``
show it on every replica.

A run that awaits its client ends its durable run; its resume runs as a
``sync`` run does (:func:`agenthost.adapters.acp.execution.start`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import datetime

from acp_sdk.models import Run, RunCreatedEvent, RunInProgressEvent, RunStatus

from agenthost.adapters.acp.execution import RunWriter
from agenthost.adapters.acp.runs import RunRecord, RunStore
from agenthost.adapters.acp.shared import SharedRuns
from agenthost.adapters.acp.timeline import TimelineSession
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.durable import DurableRuns
from agenthost.adapters.durable import RunRecord as DurableRecord
from agenthost.adapters.durable.events import decode
from agenthost.agents import (
    Agent,
    AgentError,
    ErrorKind,
    Message,
    RunFinished,
    RunResult,
    RunUpdate,
    SessionKey,
    TextDelta,
    kind_of,
)
from agenthost.agents.chat import STEP_SEPARATOR
from agenthost.agents.errors import NotFound

logger = logging.getLogger("agenthost.acp")

PROTOCOL = "acp.runs"
"""The kind of run an ACP ``async`` or ``stream`` run is, in the run log."""


class DetachedRuns:
    """How the durable runs run an ACP run (a :class:`~agenthost.adapters.durable.RunKind`),
    on any replica; and how this adapter starts one."""

    def __init__(self, context: AdapterContext, store: RunStore, shared: SharedRuns | None) -> None:
        self.context = context
        self.store = store
        self.shared = shared
        self.writers: dict[str, RunWriter] = {}
        """The runs this replica writes (started or taken over here), by id."""

    @property
    def runs(self) -> DurableRuns:
        return self.context.durable

    async def start(self, record: RunRecord, agent: Agent, input: list[Message]) -> None:
        """Run ``record`` (created, its ``run.created`` event emitted) as a durable run."""
        run = record.run
        request = {
            "session": str(run.session_id),
            "input": [m.model_dump(mode="json", exclude_none=True) for m in input],
            "created_at": run.created_at.isoformat(),
        }
        record.durable = True
        run.status = RunStatus.IN_PROGRESS
        record.emit(RunInProgressEvent(run=run))
        id = record.run_id
        writer = self.writers[id] = RunWriter(record, agent.name)
        try:
            await self.runs.start(
                DurableRecord(id, PROTOCOL, agent.name, record.principal, request)
            )
        except Exception as exc:  # not recorded (the run log is unavailable): it never ran
            self.writers.pop(id, None)
            writer.failed(exc)
            raise
        task = self.runs.tasks.get(id)
        if task is not None:
            record.work(task)

    # -- the RunKind -------------------------------------------------------------------------

    async def updates(
        self, record: DurableRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        return self._updates(record, done)

    async def _updates(
        self, record: DurableRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        writer = self.writers.get(record.id) or await self._rebuild(record)
        task = asyncio.current_task()
        if task is not None:
            writer.record.work(task)  # busy here: a cancel stops it, the store keeps it
        agent = self.context.agents.get(record.agent)
        if agent is None:
            raise NotFound(f"the agent {record.agent!r} is no longer served")
        request = record.request
        input = [Message.model_validate(m) for m in request["input"]]
        key = SessionKey(agent.name, request["session"], record.principal)
        session = TimelineSession(self.context.memory, key)
        # As the run log does (DurableRuns): a resumed run's text after finished steps
        # with text starts with the separator.
        separate = any(m.role == "assistant" and m.text for m in done)
        async with self._working(writer.record):
            run = agent.run_stream([*input, *done], session=session)
            try:
                async for update in run:
                    if isinstance(update, TextDelta) and separate:
                        separate = False
                        if not update.text.startswith(STEP_SEPARATOR):
                            await writer.feed(TextDelta(STEP_SEPARATOR))
                    if not isinstance(update, RunFinished):
                        await writer.feed(update)
                    yield update
            finally:
                await run.aclose()

    async def settled(
        self, record: DurableRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        writer = self.writers.pop(record.id, None) or await self._rebuild(record)
        self.writers.pop(record.id, None)
        acp = writer.record
        if result is not None:
            await (writer.on_pending if result.pending else writer.on_finished)(result)
        elif error is None or kind_of(error) is ErrorKind.CANCELLED:
            writer.cancelled()
        else:
            if not isinstance(error, AgentError):
                logger.error("ACP run %s failed: %r", record.id, error)
            writer.failed(error)
        if self.shared is not None:
            await self.shared.save(acp)

    # -- taking over -------------------------------------------------------------------------

    async def _rebuild(self, record: DurableRecord) -> RunWriter:
        """The ACP run of a run another replica started, as its log has it so far (the
        lost partial step discarded), kept in this replica's store from now on."""
        request = record.request
        run = Run(
            run_id=uuid.UUID(record.id),
            agent_name=record.agent,
            session_id=uuid.UUID(request["session"]),
            created_at=datetime.fromisoformat(request["created_at"]),
        )
        key = SessionKey(record.agent, request["session"], record.principal)
        acp = RunRecord(run, record.principal, key, durable=True)
        acp.emit(RunCreatedEvent(run=run))
        run.status = RunStatus.IN_PROGRESS
        acp.emit(RunInProgressEvent(run=run))
        writer = RunWriter(acp, record.agent)
        for _, raw in await self.runs.log.events(record.id):
            try:
                update = decode(raw)
            except AgentError:  # an end: none is logged before the run settles
                continue
            if update is not None and not isinstance(update, RunFinished):
                await writer.feed(update)
        self.store.add(acp)
        self.writers[record.id] = writer
        return writer

    def _working(self, record: RunRecord) -> AbstractAsyncContextManager[None]:
        """While the run works here: its progress shared with the other replicas."""
        if self.shared is None:
            return nullcontext()
        return self.shared.working(record)
