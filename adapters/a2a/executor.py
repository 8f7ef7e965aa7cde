"""The A2A executor: one A2A request becomes one run of the agent.

The task's ``contextId`` is the agent's session (key: agent, context,
principal), so a context continues across tasks. The agent's text streams
as chunks of one artifact (the first with ``append=false``, ``lastChunk``
on the last, so the chunks join to exactly the final text); its own tool
calls show as ``working`` updates. A blocking request (``SendMessage``, not
streamed) gets the answer whole instead: one artifact with one text part,
since no one watches it grow (the handler marks such requests with
:data:`WHOLE_ANSWER` in the call's state). A run that ends waiting for the user
(``ask_user``) leaves the task ``input-required`` with the question; the
client's next message in the task answers it and the run goes on.

An agent configured with ``a2a: {reply: message}`` answers a new request
with one direct ``Message`` (no task is kept) when its run finishes in one
go; a run that asks the user something, or fails, still becomes a task
(a question needs a task to answer in, a failure a state).

Cancellation: the SDK cancels the asyncio task running :meth:`execute`,
which closes the agent's run (model call and tools stop).

With tasks shared by replicas (PostgreSQL) and a shared run log (Redis),
the run is a durable run instead (:mod:`agenthost.adapters.a2a.runs`): it
goes on in a task of its own, and on another replica if this one dies.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message as A2AMessage
from a2a.types import Part, Role, Task, TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError

from agenthost.adapters.a2a import convert
from agenthost.adapters.a2a.errors import task_end
from agenthost.adapters.a2a.pacing import paced
from agenthost.adapters.a2a.turns import HeldSession, HeldTurns
from agenthost.adapters.runs import RunConsumer, pending_in, resume_input
from agenthost.agents import (
    Agent,
    MemoryManager,
    Message,
    RunResult,
    SessionKey,
    SubAgentUpdate,
    TextDelta,
    ToolCallPart,
    ToolCallStarted,
    question_of,
)
from agenthost.agents.chat import STEP_SEPARATOR
from agenthost.agents.results import RunUpdate, tool_progress
from agenthost.agents.sessions import ManagedSession

if TYPE_CHECKING:
    from agenthost.adapters.a2a.runs import TaskRuns

WHOLE_ANSWER = "agenthost.a2a.whole_answer"
"""Call-state key: the request is not streamed, so the answer's text is sent as one part."""

FIRST_FLUSH = 0.05
"""Seconds of text gathered into the first artifact chunk, at most (when it comes faster)."""

FLUSH_EVERY = 0.1
"""Seconds of text gathered into each later artifact chunk, at most: every chunk is an event
through the a2a-sdk's queues and task store, ~0.4 ms of CPU each (bench/README.md, session 16)."""

CHUNK_CHARS = 128 * 1024
"""Characters of text gathered into one artifact chunk, at most: a fast run's chunks stay
small enough for a stream that is not read to hold it back (:mod:`.pacing`)."""


class AgentRunExecutor(AgentExecutor):
    """Runs one agent for A2A requests, with sessions in ``memory``."""

    def __init__(
        self,
        agent: Agent,
        memory: MemoryManager,
        *,
        reply_message: bool = False,
        runs: TaskRuns | None = None,
        turns: HeldTurns | None = None,
    ) -> None:
        self.agent = agent
        self.memory = memory
        self.reply_message = reply_message
        self.runs = None if reply_message else runs
        """The durable runs of tasks (None: the run is this request's own)."""
        self.turns = turns
        """Where a task's run holds its turn until the task's end is saved
        (:mod:`agenthost.adapters.a2a.turns`; None: saved as the run ends)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message, (task_id, context_id) = context.message, _ids(context)
        if message is None or task_id is None or context_id is None:
            raise InvalidParamsError("the request has no message")
        principal = context.call_context.user.user_name
        key = SessionKey(self.agent.name, context_id, principal)
        event_queue = paced(event_queue, context.call_context)  # a stream's run waits for it
        direct = self.reply_message and context.current_task is None  # maybe no task at all
        if self.turns is not None and not direct:
            session: ManagedSession = HeldSession(self.memory, key, self.turns, task_id)
        else:
            session = ManagedSession(self.memory, key)
        run_input = await self._run_input(message, session)
        if self.runs is not None:
            await self._durable(context, event_queue, run_input, task_id, context_id)
            return
        updates = self.agent.run_stream(run_input, session=session)
        if direct:
            answer = _Answer(self.agent.name)
            try:
                await answer.consume(updates)
            except Exception as exc:
                answer.error = exc
            if answer.result is not None and not answer.result.pending:
                parts = [Part(text=answer.text or answer.result.output)]
                parts += convert.output_parts(answer.result)
                await event_queue.enqueue_event(
                    A2AMessage(
                        message_id=str(uuid.uuid4()),
                        role=Role.ROLE_AGENT,
                        parts=parts,
                        context_id=context_id,
                    )
                )
                return
            updates = answer.replay()
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        try:
            whole = bool(context.call_context.state.get(WHOLE_ANSWER))
            await self._writer(updater, whole=whole).consume(updates)
        except Exception as exc:
            await self._writer(updater, whole=whole).fail(exc)

    async def _durable(
        self,
        context: RequestContext,
        event_queue: EventQueue,
        run_input: Message,
        task_id: str,
        context_id: str,
    ) -> None:
        """The run as a durable run, its updates written through this request's queue."""
        assert self.runs is not None
        message = context.message
        assert message is not None
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        whole = bool(context.call_context.state.get(WHOLE_ANSWER))
        principal = context.call_context.user.user_name
        await self.runs.run(
            self.agent.name, principal, task_id, context_id, run_input, updater, whole=whole
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # The SDK cancels the run's task next; a durable run is stopped here.
        task_id, context_id = _ids(context)
        if task_id is not None and self.runs is not None:
            await self.runs.cancel_task(task_id)
        if task_id is not None and context_id is not None:
            await TaskUpdater(event_queue, task_id, context_id).cancel()

    def _writer(self, updater: TaskUpdater, *, whole: bool) -> TaskWriter:
        """What writes the run as the task's updates (a subclass may write more)."""
        return TaskWriter(self.agent.name, updater, whole=whole)

    async def _run_input(self, message: A2AMessage, session: ManagedSession) -> Message:
        reply = Message(
            role="user",
            parts=await convert.from_parts_off_loop(message.parts),
            id=message.message_id or None,
        )
        # A run that asked the user something takes this message as the answer.
        return resume_input(pending_in(await session.load()), reply)


class TaskWriter(RunConsumer[None]):
    """A run as the task's updates: artifact chunks of its text, ``working`` notes
    for tool calls, then its end (``completed``, or ``input-required`` with the question;
    :meth:`fail` for a run that failed).

    A durable run's writer is fed one update at a time (:meth:`write`) and ended by
    :meth:`end` or :meth:`fail`; a writer taking over a run that another replica
    started is first given the text kept of it (:meth:`resume`).
    """

    def __init__(
        self, agent: str, updater: TaskUpdater, *, whole: bool, artifact_id: str | None = None
    ) -> None:
        super().__init__(agent)
        self.updater = updater
        self.chunks = _ArtifactChunks(updater, artifact_id or str(uuid.uuid4()), whole=whole)
        self.separate = False

    async def write(self, update: RunUpdate) -> None:
        """One update of the run (its end is :meth:`end`'s)."""
        if isinstance(update, TextDelta):
            await self.on_text(update.text)
        elif isinstance(update, ToolCallStarted):
            await self.on_tool_started(update.call)
        elif isinstance(update, SubAgentUpdate):
            await self.on_sub_agent(update)

    async def resume(self, texts: Sequence[str]) -> None:
        """Go on from the finished steps' ``texts`` (what the replica that died had
        streamed of a step it did not finish is dropped): the answer's artifact is
        replaced (``append: false``) by the kept text, and the rest follows it."""
        self.separate = bool(texts)
        await self.chunks.restart(STEP_SEPARATOR.join(texts))

    async def end(self, result: RunResult) -> None:
        """The run's end: ``completed``, or ``input-required`` with the question."""
        await (self.on_pending(result) if result.pending else self.on_finished(result))

    async def fail(self, exc: BaseException) -> None:
        """The run's end when it failed: the task's state and a message saying why."""
        error = exc if isinstance(exc, Exception) else RuntimeError(str(exc))
        state, text, metadata = task_end(error, self.agent)
        message = self.updater.new_agent_message([Part(text=text)], metadata=metadata)
        await self.updater.update_status(state, message)

    async def on_text(self, text: str) -> Sequence[None]:
        if self.separate:
            # The durable runner starts a resumed run's next step as a new paragraph.
            self.separate = False
            if not text.startswith(STEP_SEPARATOR):
                text = STEP_SEPARATOR + text
        await self.chunks.add(text)
        return ()

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[None]:
        await self._note(f"calling {call.name}")
        return ()

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[None]:
        # The tool calls of agents working for it show too.
        if (progress := tool_progress(update)) is not None:
            await self._note(progress)
        return ()

    async def on_finished(self, result: RunResult) -> Sequence[None]:
        await self.chunks.close(result)
        await self.updater.complete()
        return ()

    async def on_pending(self, result: RunResult) -> Sequence[None]:
        await self.chunks.close(result)
        questions = [q for call in result.pending if (q := question_of(call))]
        text = "\n".join(questions) or "the agent needs input"
        await self.updater.requires_input(self.updater.new_agent_message([Part(text=text)]))
        return ()

    async def _note(self, progress: str) -> None:
        note = self.updater.new_agent_message([Part(text=progress)])
        await self.updater.update_status(TaskState.TASK_STATE_WORKING, note)


def _ids(context: RequestContext) -> tuple[str | None, str | None]:
    """The task's id and context id; a request that names its task but not its
    context continues the task's context."""
    if context.current_task is not None:
        return context.current_task.id, context.current_task.context_id
    return context.task_id, context.context_id


class _ArtifactChunks:
    """The answer's text as chunks of one artifact.

    Text is held back until the next piece arrives, so that the last chunk
    can carry ``lastChunk``: the chunks join to the final text, nothing
    added or lost. Pieces are gathered into one chunk (up to
    :data:`CHUNK_CHARS`): the first chunk's for at most :data:`FIRST_FLUSH`
    (the first words show at once), each later one's for at most
    :data:`FLUSH_EVERY` since the last chunk went. Each chunk is an event
    through the SDK's queues and task store and a part of the stored
    artifact, so fewer of them cost less CPU and keep the task small. With
    ``whole``, every piece is held until the end: one chunk, one text part.
    The text sent is kept one string per chunk (not per piece: a word is a
    ~50-byte object).
    """

    def __init__(
        self,
        updater: TaskUpdater,
        artifact_id: str,
        *,
        whole: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.updater, self.artifact_id, self.whole = updater, artifact_id, whole
        self.clock = clock
        self.held = ""
        self.flushed: list[str] = []
        self.sent = 0
        self.last_sent = clock()

    async def restart(self, text: str) -> None:
        """Start the artifact again from ``text`` (sent now, replacing the artifact)."""
        self.held, self.flushed, self.sent = text, [], 0
        if not self.whole:
            await self._flush()

    def hold(self, text: str) -> None:
        """Hold ``text`` as all the text so far (the next chunk sends it again)."""
        self.held, self.flushed = text, []

    async def add(self, text: str) -> None:
        if (
            self.held
            and not self.whole
            and (
                len(self.held) >= CHUNK_CHARS
                or self.clock() - self.last_sent >= (FLUSH_EVERY if self.sent else FIRST_FLUSH)
            )
        ):
            await self._flush()
        self.held += text

    @property
    def text(self) -> str:
        """All the text added so far."""
        return "".join(self.flushed) + self.held

    async def _flush(self) -> None:
        await self._send([Part(text=self.held)], last=False)
        self.flushed.append(self.held)
        self.held = ""

    async def close(self, result: RunResult) -> None:
        if not self.sent and not self.held:
            self.held = result.output  # an agent that does not stream its text
        parts = ([Part(text=self.held)] if self.held else []) + convert.output_parts(result)
        if parts:
            await self._send(parts, last=True)
        elif self.sent:
            await self._send([Part(text="")], last=True)

    async def _send(self, parts: list[Part], *, last: bool) -> None:
        await self.updater.add_artifact(
            parts,
            artifact_id=self.artifact_id,
            name="answer",
            append=self.sent > 0,
            last_chunk=last,
        )
        self.sent += 1
        self.last_sent = self.clock()


class _Answer(RunConsumer[None]):
    """A run gathered whole, for a direct Message reply. What it saw is kept, to be
    replayed as a task's updates when the run turns out to need one (a question,
    a failure)."""

    def __init__(self, agent: str) -> None:
        super().__init__(agent)
        self.text = ""
        self.error: Exception | None = None
        self.seen: list[RunUpdate] = []

    async def consume(self, updates: AsyncGenerator[RunUpdate, None]) -> RunResult | None:
        async def recorded() -> AsyncGenerator[RunUpdate, None]:
            try:
                async for update in updates:
                    self.seen.append(update)
                    yield update
            finally:
                await updates.aclose()

        return await super().consume(recorded())

    async def on_text(self, text: str) -> Sequence[None]:
        self.text += text
        return ()

    async def replay(self) -> AsyncGenerator[RunUpdate, None]:
        for update in self.seen:
            yield update
        if self.error is not None:
            raise self.error
