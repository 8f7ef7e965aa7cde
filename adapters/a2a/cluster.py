"""The A2A request handler: a cancel on one replica stops the run on the one running it.

A blocking ``SendMessage`` is marked so that its answer comes whole (one
text part, see :mod:`agenthost.adapters.a2a.executor`). A large message's
required fields are checked off the loop (:mod:`agenthost.adapters.a2a.validation`).
A message that names only its task is given the task's context (any replica
may take it up).

With tasks in PostgreSQL, the SDK records a cancel of a task that runs on
another replica in the database; the running replica would notice only at
the run's next write (a silent tool call or a slow model would go on). So
such a cancel also goes over the cross-replica cancel channel
(:mod:`agenthost.adapters.cancels`), and the replica that holds the task
cancels it at once: its run (model call, tools) is stopped.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.cluster.task_store import StoredTask
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import CancelTaskRequest, Message, SendMessageRequest, Task

from agenthost.adapters.a2a.executor import WHOLE_ANSWER
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.adapters.a2a.validation import checked
from agenthost.adapters.cancels import CancelChannel

logger = logging.getLogger("agenthost.a2a")


class ClusterRequestHandler(DefaultRequestHandler):
    """The SDK's handler, whose cancels also reach the replica that runs the task.

    Reads the SDK's private ``_active_task_registry`` (which tasks run here,
    and their ``cancel``): the handler neither takes the registry in its
    constructor nor exposes it, so there is no public way (a2a-sdk 1.3).
    """

    def __init__(self, *args: Any, cancels: CancelChannel | None, agent: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.cancels = cancels
        self.agent = agent

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        # Not streamed: the answer is sent whole (one text part, not one per chunk).
        context.state[WHOLE_ANSWER] = True
        send = await checked(DefaultRequestHandler.on_message_send, params)
        await self._in_its_context(params, context)
        result: Message | Task = await send(self, params, context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        send = await checked(DefaultRequestHandler.on_message_send_stream, params)
        await self._in_its_context(params, context)
        events = send(self, params, context)
        try:
            async for event in events:
                yield event
        finally:  # as the SDK's decorator does: its cleanup runs on a client's disconnect
            await events.aclose()

    async def _in_its_context(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        """A message that names its task but not its context continues the task's context.

        The SDK would give it a new context id, which the replica holding the
        task (its ``ActiveTask``) ignores, but a replica taking the task up from
        the store refuses as not the task's (the follow-up of a question asked
        on another replica)."""
        message = params.message
        if not message.task_id or message.context_id:
            return
        found = await self.task_store.get(message.task_id, context)
        task = found.task if isinstance(found, StoredTask) else found
        if task is not None:
            message.context_id = task.context_id

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        held_here = await self._active_task_registry.get(params.id) is not None
        task: Task | None = await super().on_cancel_task(params, context)
        if self.cancels is not None and not held_here:
            owner = f"{self.agent}/{context.user.user_name}"
            await self.cancels.send(owner, params.id)
        return task

    async def cancel_here(self, principal: str, task_id: str) -> None:
        """Stop the task's run if this replica holds it (the store says cancelled already)."""
        active = await self._active_task_registry.get(task_id)
        if active is None:
            return
        try:
            await active.cancel(ServerCallContext(user=PrincipalUser(principal)))
        except Exception:
            # The task is cancelled in the store; writing it again may conflict.
            logger.debug("A2A task %s: cancelled by another replica", task_id, exc_info=True)
