"""Where A2A tasks and push configs live, owned by agent and principal.

Every store resolves a task's owner as ``agent/principal``: one agent's
tasks are never reached through another agent's endpoint, and one API
key never reaches another's (the SDK keys tasks by the call context's
user, which the adapter builds from the principal).

- ``memory`` (default): per agent, bounded; a task that has finished (or
  waits for input) is dropped once more than ``max_tasks`` have, or when
  it has been idle for ``ttl`` seconds, like sessions.
- ``sqlite:///path``: one SQLite file shared by every agent (SQLAlchemy
  + aiosqlite); tables are created at start-up, tasks survive a restart.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from a2a.server.agent_execution.active_task import INTERRUPTED_TASK_STATES, TERMINAL_TASK_STATES
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver
from a2a.server.tasks import (
    DatabasePushNotificationConfigStore,
    DatabaseTaskStore,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    PushNotificationConfigStore,
    TaskStore,
)
from a2a.types import ListTasksRequest, ListTasksResponse, Task
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from agenthost.adapters.a2a.users import PrincipalUser

IDLE_STATES = TERMINAL_TASK_STATES | INTERRUPTED_TASK_STATES


class TaskStoreError(ValueError):
    """The task store setting names no store this adapter can use."""


def owner_of(agent: str) -> OwnerResolver:
    """The owner of a task reached through ``agent``'s endpoint: ``agent/principal``."""

    def resolve(context: ServerCallContext) -> str:
        return f"{agent}/{context.user.user_name}"

    return resolve


class BoundedTaskStore(TaskStore):
    """The SDK's in-memory store, minus the idle tasks beyond a count and an age."""

    def __init__(self, agent: str, *, max_tasks: int, ttl: float) -> None:
        self._inner = InMemoryTaskStore(owner_resolver=owner_of(agent))
        self._max, self._ttl = max_tasks, ttl
        # (principal, task id) → when it went idle; oldest first.
        self._idle: OrderedDict[tuple[str, str], float] = OrderedDict()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self._inner.save(task, context)
        key = (context.user.user_name, task.id)
        if task.status.state in IDLE_STATES:
            self._idle[key] = time.monotonic()
            self._idle.move_to_end(key)
        else:
            self._idle.pop(key, None)
        await self._evict()

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        return await self._inner.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._inner.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._idle.pop((context.user.user_name, task_id), None)
        await self._inner.delete(task_id, context)

    async def _evict(self) -> None:
        expired_before = time.monotonic() - self._ttl
        while self._idle:
            (principal, task_id), since = next(iter(self._idle.items()))
            if len(self._idle) <= self._max and since > expired_before:
                return
            del self._idle[(principal, task_id)]
            context = ServerCallContext(user=PrincipalUser(principal))
            await self._inner.delete(task_id, context)


class TaskStores:
    """Builds each agent's task and push-config stores from one setting."""

    def __init__(self, url: str, *, max_tasks: int, ttl: float) -> None:
        self.url = url
        self._max, self._ttl = max_tasks, ttl
        self._engine: AsyncEngine | None = None
        self._database: list[DatabaseTaskStore | DatabasePushNotificationConfigStore] = []
        if url == "memory":
            return
        if not url.startswith("sqlite:///"):
            raise TaskStoreError(
                f"unknown A2A task store {url!r}: use 'memory' or 'sqlite:///path/to/tasks.db'"
            )
        self._engine = create_async_engine("sqlite+aiosqlite:///" + url.removeprefix("sqlite:///"))

    def tasks(self, agent: str) -> TaskStore:
        if self._engine is None:
            return BoundedTaskStore(agent, max_tasks=self._max, ttl=self._ttl)
        store = DatabaseTaskStore(self._engine, owner_resolver=owner_of(agent))
        self._database.append(store)
        return store

    def push_configs(self, agent: str) -> PushNotificationConfigStore:
        if self._engine is None:
            return InMemoryPushNotificationConfigStore(owner_resolver=owner_of(agent))
        store = DatabasePushNotificationConfigStore(self._engine, owner_resolver=owner_of(agent))
        self._database.append(store)
        return store

    async def start(self) -> None:
        """Create the tables (once, before serving)."""
        for store in self._database:
            await store.initialize()

    async def aclose(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
