"""A2A tasks as durable runs: a task never stays ``working`` after its replica died.

With tasks in PostgreSQL and the run log in Redis (replicas), a message's
run is a durable run (:mod:`agenthost.adapters.durable`) whose record holds
what any replica needs to run it again: the agent, the task and context
ids, the run's input (the message, or the answer to a question asked), the
principal, and the id of the answer's artifact. The request that started it
writes its updates through the SDK's event queue, as any run's; the SDK's
subscribers, ``GetTask`` and the other replicas (``task_events``) see them.

When that replica dies, its lease expires and another replica claims the
run (:class:`~agenthost.adapters.durable.DurableRuns`) and resumes it from
its last finished step: a tool whose result was recorded is not run again.
That replica has no request, so it writes the task itself, through the
SDK's :class:`~a2a.server.tasks.TaskManager` on the shared task store
(versioned, each write an event in ``task_events``): first the answer's
artifact again, ``append: false``, holding only the text of the finished
steps (what the dead replica had streamed of the step it did not finish is
dropped), then the resumed run's chunks and its end. A client that lost its
stream reconnects to any replica with ``SubscribeToTask``: the task as it
stands, then those events, to the final status.

A replica stopping normally hands its runs over the same way (its requests
end first: their runs go on writing to the store, :meth:`TaskRuns.run`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Mapping

from a2a.server.agent_execution.active_task import TERMINAL_TASK_STATES
from a2a.server.cluster.task_store import ConcurrentTaskModificationError, VersionedTaskStore
from a2a.server.context import ServerCallContext
from a2a.server.events import Event, EventQueue
from a2a.server.tasks import TaskManager, TaskStore, TaskUpdater
from a2a.types import Part, TaskState

from agenthost.adapters.a2a.executor import TaskWriter
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.adapters.durable import DurableRuns, RunRecord
from agenthost.agents import (
    Agent,
    MemoryManager,
    Message,
    RunCancelled,
    RunResult,
    RunUpdate,
    SessionKey,
)
from agenthost.agents.errors import RunIncomplete
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.a2a")

PROTOCOL = "a2a.task"
"""The kind of run an A2A task's run is, in the run log."""

RESUMED = "the replica running this task stopped; another one goes on from its last finished step"
"""The ``working`` note a task gets when another replica takes its run over."""


class TaskRuns:
    """How the durable runs run an A2A task's run (a
    :class:`~agenthost.adapters.durable.RunKind`), on any replica.

    ``writers`` holds the writer of each run going on here: the request's own
    (SDK event queue) on the replica that started it, a task-store writer on a
    replica that took it over.
    """

    def __init__(
        self, durable: DurableRuns, memory: MemoryManager, agents: Mapping[str, Agent]
    ) -> None:
        self.durable = durable
        self.memory = memory
        self.agents = agents
        self.task_stores: dict[str, TaskStore | VersionedTaskStore] = {}
        """Each agent's task store (set by the adapter as it makes the agent's handler)."""
        self.writers: dict[str, TaskWriter] = {}
        self.runs: dict[str, str] = {}
        """Task id → id of its run going on here."""
        self.cancelled: set[str] = set()

    async def run(
        self,
        agent: str,
        principal: str,
        task_id: str,
        context_id: str,
        run_input: Message,
        updater: TaskUpdater,
        *,
        whole: bool,
    ) -> None:
        """Run a task's message as a durable run, written through ``updater``, until it ends.

        If the request ends first (the server stops: the SDK closes its queue),
        the run goes on writing to the task store instead.
        """
        id = f"a2a_{uuid.uuid4().hex}"
        artifact = f"{id}-answer"
        request = {
            "task": task_id,
            "context": context_id,
            "input": run_input.model_dump(mode="json", exclude_none=True),
            "whole": whole,
            "artifact": artifact,
        }
        record = RunRecord(id, PROTOCOL, agent, principal, request)
        self.writers[id] = TaskWriter(agent, updater, whole=whole, artifact_id=artifact)
        self.runs[task_id] = id
        await self.durable.start(record)
        drive = self.durable.tasks.get(id)
        if drive is None:
            return
        try:
            await asyncio.shield(drive)
            # Settled here (its end written), or handed over to another replica.
            self._forget(id, task_id)
        except asyncio.CancelledError:
            if id in self.writers and id not in self.cancelled:
                # What the request's queue had not written may be lost: the store
                # writer's next chunk holds the whole text so far (append: false).
                old = self.writers.pop(id)
                writer = await self._store_writer(record)
                if writer is not None:
                    writer.chunks.hold(old.chunks.text)
                    writer.separate = old.separate
                    self.writers[id] = writer
            raise
        except Exception:
            self._forget(id, task_id)  # settled with its error (written by settled)

    async def cancel_task(self, task_id: str) -> None:
        """Stop the run of ``task_id`` if it goes on here (its task was cancelled)."""
        id = self.runs.get(task_id)
        if id is not None and id in self.durable.tasks:
            self.cancelled.add(id)
            await self.durable.cancel(id)

    # -- the RunKind -----------------------------------------------------------------------

    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        return self._updates(record, done)

    async def _updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        request = record.request
        agent = self.agents.get(record.agent)
        if agent is None:
            raise RunIncomplete(f"the agent {record.agent!r} is no longer served")
        if record.id not in self.writers:  # taken over from a replica that died
            writer = await self._store_writer(record)
            if writer is None:
                raise RunCancelled("the task was ended while no replica ran it")
            self.writers[record.id] = writer
            self.runs[request["task"]] = record.id
            await writer.updater.update_status(
                TaskState.TASK_STATE_WORKING, writer.updater.new_agent_message([Part(text=RESUMED)])
            )
            await writer.resume([m.text for m in done if m.role == "assistant" and m.text])
        session = ManagedSession(
            self.memory, SessionKey(record.agent, request["context"], record.principal)
        )
        run_input = Message.model_validate(request["input"])
        run = agent.run_stream([run_input, *done], session=session)
        try:
            async for update in run:
                current = self.writers.get(record.id)
                if current is None:  # its request ended, and the task with it
                    raise RunCancelled("the task was ended by another request")
                await current.write(update)
                yield update
        finally:
            await run.aclose()

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        writer = self.writers.get(record.id)
        self._forget(record.id, record.request["task"])
        if isinstance(error, RunCancelled):
            return  # whoever cancelled the task wrote its end
        if writer is None:  # orphaned and not resumed (durable: false)
            writer = await self._store_writer(record)
            if writer is None:
                return  # ended meanwhile (cancelled)
        if result is not None:
            await writer.end(result)
        else:
            assert error is not None
            await writer.fail(error)

    def _forget(self, id: str, task_id: str) -> None:
        self.writers.pop(id, None)
        if self.runs.get(task_id) == id:
            del self.runs[task_id]
        self.cancelled.discard(id)

    async def _store_writer(self, record: RunRecord) -> TaskWriter | None:
        """A writer of the task straight to its store (no request, no SDK queue, here);
        None when the task is gone or ended (a cancel while no replica ran it)."""
        request = record.request
        context = ServerCallContext(user=PrincipalUser(record.principal))
        manager = TaskManager(
            self.task_stores[record.agent], context, request["task"], request["context"], None
        )
        task = await manager.get_task()
        if task is None or task.status.state in TERMINAL_TASK_STATES:
            return None
        updater = TaskUpdater(_StoreQueue(manager), request["task"], request["context"])
        return TaskWriter(
            record.agent, updater, whole=request["whole"], artifact_id=request["artifact"]
        )


class _StoreQueue(EventQueue):
    """An executor's event queue whose events go straight to the task store (the SDK's
    ``TaskManager``: the task's new state, and the event in ``task_events``)."""

    def __init__(self, manager: TaskManager) -> None:
        self.manager = manager

    async def enqueue_event(self, event: Event) -> None:
        try:
            await self.manager.process(event)
        except ConcurrentTaskModificationError:
            # Written meanwhile elsewhere: a cancel (then the run stops), or not.
            self.manager.invalidate()
            task = await self.manager.get_task()
            if task is None or task.status.state in TERMINAL_TASK_STATES:
                raise RunCancelled("the task was ended by another request") from None
            await self.manager.process(event)
