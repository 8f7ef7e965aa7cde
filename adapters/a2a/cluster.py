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

With tasks in PostgreSQL every request is also guarded by the database's
:class:`~agenthost.adapters.a2a.databases.Outage`: while the database is down
a request is refused before it starts anything, and one that finds it gone
gets :class:`~agenthost.adapters.a2a.errors.TaskStoreUnavailable` (the
protocol's "unavailable" error), never the driver's text.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TypeVar

from a2a.server.cluster.task_store import StoredTask
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

from agenthost.adapters.a2a.executor import WHOLE_ANSWER
from agenthost.adapters.a2a.pacing import reader
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.adapters.a2a.validation import checked
from agenthost.adapters.cancels import CancelChannel

if TYPE_CHECKING:
    from agenthost.adapters.a2a.databases import Outage

T = TypeVar("T")

logger = logging.getLogger("agenthost.a2a")


class ClusterRequestHandler(DefaultRequestHandler):
    """The SDK's handler, whose cancels also reach the replica that runs the task.

    Reads the SDK's private ``_active_task_registry`` (which tasks run here,
    and their ``cancel``): the handler neither takes the registry in its
    constructor nor exposes it, so there is no public way (a2a-sdk 1.3).
    """

    def __init__(
        self,
        *args: Any,
        cancels: CancelChannel | None,
        agent: str,
        outage: Outage | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.cancels = cancels
        self.agent = agent
        self.outage = outage

    async def _guarded(self, call: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``call(*args)``, refused while the task database is down, its outage errors
        translated."""
        if self.outage is None:
            return await call(*args)
        self.outage.check()
        try:
            return await call(*args)
        except Exception as exc:
            translated = self.outage.translate(exc)
            if translated is exc:
                raise
            raise translated from None

    async def _guarded_stream(
        self, events: Callable[..., AsyncGenerator[Event]], *args: Any
    ) -> AsyncIterator[Event]:
        if self.outage is None:
            async with aclosing(events(*args)) as stream:
                async for event in stream:
                    yield event
            return
        self.outage.check()
        try:
            async with aclosing(events(*args)) as stream:
                async for event in stream:
                    yield event
        except Exception as exc:
            translated = self.outage.translate(exc)
            if translated is exc:
                raise
            raise translated from None

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        # Not streamed: the answer is sent whole (one text part, not one per chunk).
        context.state[WHOLE_ANSWER] = True
        send = await checked(DefaultRequestHandler.on_message_send, params)
        await self._guarded(self._in_its_context, params, context)
        result: Message | Task = await self._guarded(send, self, params, context)
        return result

    async def on_message_send_stream(  # type: ignore[override]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Event]:
        send = await checked(DefaultRequestHandler.on_message_send_stream, params)
        await self._guarded(self._in_its_context, params, context)
        # The run waits while its events are not sent (a client that does not read).
        events = reader(self._guarded_stream(send, self, params, context), context)
        async with aclosing(events) as stream:
            async for event in stream:
                yield event

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

    async def on_subscribe_to_task(  # type: ignore[override]
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncIterator[Event]:
        async for event in self._guarded_stream(super().on_subscribe_to_task, params, context):
            yield event

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        task: Task | None = await self._guarded(super().on_get_task, params, context)
        return task

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        tasks: ListTasksResponse = await self._guarded(super().on_list_tasks, params, context)
        return tasks

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        config: TaskPushNotificationConfig = await self._guarded(
            super().on_create_task_push_notification_config, params, context
        )
        return config

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        config: TaskPushNotificationConfig = await self._guarded(
            super().on_get_task_push_notification_config, params, context
        )
        return config

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        configs: ListTaskPushNotificationConfigsResponse = await self._guarded(
            super().on_list_task_push_notification_configs, params, context
        )
        return configs

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        await self._guarded(super().on_delete_task_push_notification_config, params, context)

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        task: Task | None = await self._guarded(self._cancel, params, context)
        return task

    async def _cancel(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
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
