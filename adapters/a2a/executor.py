"""The A2A executor: one A2A request becomes one run of the agent.

The task's ``contextId`` is the agent's session (key: agent, context,
principal), so a context continues across tasks. The agent's text streams
as chunks of one artifact (the first with ``append=false``, ``lastChunk``
on the last, so the chunks join to exactly the final text); its own tool
calls show as ``working`` updates. A run that ends waiting for the user
(``ask_user``) leaves the task ``input-required`` with the question; the
client's next message in the task answers it and the run goes on.

Cancellation: the SDK cancels the asyncio task running :meth:`execute`,
which closes the agent's run (model call and tools stop).
"""

from __future__ import annotations

import logging
import time
import uuid

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message as A2AMessage
from a2a.types import Part, Task, TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError

from agenthost.adapters.a2a import convert
from agenthost.agents import (
    Agent,
    AgentError,
    MemoryManager,
    Message,
    ModelBusy,
    RunFinished,
    RunRefused,
    RunResult,
    SessionKey,
    TextDelta,
    answer_pending,
    question_of,
)
from agenthost.agents.results import tool_progress
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.a2a")

FLUSH_EVERY = 0.05
"""Seconds of text gathered into one artifact chunk, at most (when it comes faster)."""


class AgentRunExecutor(AgentExecutor):
    """Runs one agent for A2A requests, with sessions in ``memory``."""

    def __init__(self, agent: Agent, memory: MemoryManager) -> None:
        self.agent = agent
        self.memory = memory

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message, (task_id, context_id) = context.message, _ids(context)
        if message is None or task_id is None or context_id is None:
            raise InvalidParamsError("the request has no message")
        principal = context.call_context.user.user_name
        session = ManagedSession(self.memory, SessionKey(self.agent.name, context_id, principal))
        run_input = await self._run_input(message, session)
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
            result = await self._stream(run_input, session, updater)
        except RunRefused as exc:
            await updater.reject(updater.new_agent_message([Part(text=str(exc))]))
        except ModelBusy as exc:
            text = f"the model is busy, try again later: {exc}"
            await updater.failed(updater.new_agent_message([Part(text=text)]))
        except AgentError as exc:
            await updater.failed(updater.new_agent_message([Part(text=str(exc) or "run failed")]))
        except Exception:
            # A bug, not a reason for the client: logged here, not sent.
            logger.exception("agent %r failed", self.agent.name)
            text = f"the agent {self.agent.name!r} failed unexpectedly (see the server log)"
            await updater.failed(updater.new_agent_message([Part(text=text)]))
        else:
            await self._finish(result, updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # The SDK has already cancelled the run's task; only the state is left to set.
        task_id, context_id = _ids(context)
        if task_id is not None and context_id is not None:
            await TaskUpdater(event_queue, task_id, context_id).cancel()

    async def _run_input(self, message: A2AMessage, session: ManagedSession) -> Message:
        parts = convert.from_parts(message.parts)
        history = await session.load()
        waiting = history[-1].tool_calls if history and history[-1].role == "assistant" else []
        message_id = message.message_id or None
        if waiting:
            # The run asked the user something: this message is the answer.
            answer = answer_pending(waiting, convert.reply_text(parts))
            return answer.model_copy(update={"id": message_id})
        return Message(role="user", parts=parts, id=message_id)

    async def _stream(
        self, run_input: Message, session: ManagedSession, updater: TaskUpdater
    ) -> RunResult:
        chunks = _ArtifactChunks(updater, str(uuid.uuid4()))
        async for update in self.agent.run_stream(run_input, session=session):
            if isinstance(update, TextDelta):
                await chunks.add(update.text)
            elif (progress := tool_progress(update)) is not None:
                # The agent's own tool calls, and those of agents working for it.
                note = updater.new_agent_message([Part(text=progress)])
                await updater.update_status(TaskState.TASK_STATE_WORKING, note)
            elif isinstance(update, RunFinished):
                await chunks.close(update.result)
                return update.result
        raise AgentError(f"agent {self.agent.name!r} ended without a result")

    async def _finish(self, result: RunResult, updater: TaskUpdater) -> None:
        if result.awaiting_client:
            questions = [q for call in result.pending if (q := question_of(call))]
            text = "\n".join(questions) or "the agent needs input"
            await updater.requires_input(updater.new_agent_message([Part(text=text)]))
        else:
            await updater.complete()


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
    added or lost. Pieces that come faster than :data:`FLUSH_EVERY` are
    sent together, which keeps the stored artifact (one part per chunk)
    and the task store's writes small.
    """

    def __init__(self, updater: TaskUpdater, artifact_id: str) -> None:
        self.updater, self.artifact_id = updater, artifact_id
        self.held = ""
        self.sent = 0
        self.last_sent = time.monotonic()

    async def add(self, text: str) -> None:
        if self.held and time.monotonic() - self.last_sent >= FLUSH_EVERY:
            await self._send([Part(text=self.held)], last=False)
            self.held = ""
        self.held += text

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
        self.last_sent = time.monotonic()
