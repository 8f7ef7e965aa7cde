"""Where A2A tasks and push configs live, owned by agent and principal.

Every store resolves a task's owner as ``agent/principal``: one agent's
tasks are never reached through another agent's endpoint, and one API
key never reaches another's (the SDK keys tasks by the call context's
user, which the adapter builds from the principal).

- ``memory`` (default): per agent, bounded; a task that has finished (or
  waits for input) is dropped once more than ``max_tasks`` have, or their
  serialized size passes ``max_bytes`` (oldest idle first; running tasks
  count but are never dropped), or when it has been idle for ``ttl``
  seconds, like sessions. Its push configs go with it; they are bounded
  too: :data:`MAX_PUSH_CONFIGS_PER_TASK` per task and ``max_bytes`` in all.
  A task the agent answered in one go keeps no copy of its question and
  answer: they are read back from its context's session
  (:mod:`agenthost.adapters.a2a.answered`), and the task goes with it.
- ``sqlite:///path``: one SQLite file shared by every agent (SQLAlchemy
  + aiosqlite); tables are created at start-up, tasks survive a restart.
- ``postgresql+asyncpg://…`` (or ``postgresql://…``): one PostgreSQL
  database shared by every replica, through the SDK's cluster support
  (``VersionedDatabaseTaskStore`` + ``DatabaseTaskEventStream``): a task
  started on one replica can be read, listed, subscribed to and cancelled
  from any other; the replica running it stops the run when it next writes
  the task and finds it cancelled. Push configs live in the same database.
  Tables (``tasks``, ``task_versions``, ``task_events``,
  ``push_notification_configs``) are created at start-up when missing, or
  beforehand by ``agenthost migrate``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from a2a.server.agent_execution.active_task import INTERRUPTED_TASK_STATES, TERMINAL_TASK_STATES
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver
from a2a.server.tasks import (
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    PushNotificationConfigStore,
    TaskStore,
)
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig

from agenthost.adapters.a2a import answered
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.agents import MemoryManager, Message, SessionKey

if TYPE_CHECKING:
    from a2a.server.cluster.database_event_stream import DatabaseTaskEventStream
    from a2a.server.cluster.database_task_store import VersionedDatabaseTaskStore

    from agenthost.adapters.a2a.databases import DatabaseStores, Outage

IDLE_STATES = TERMINAL_TASK_STATES | INTERRUPTED_TASK_STATES
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_PUSH_CONFIGS_PER_TASK = 10
MIGRATION = "(migration)"
"""The agent name of the stores :meth:`TaskStores.create_tables` makes (no agent's)."""


class TaskStoreError(ValueError):
    """The task store setting names no store this adapter can use."""


def owner_of(agent: str) -> OwnerResolver:
    """The owner of a task reached through ``agent``'s endpoint: ``agent/principal``."""

    def resolve(context: ServerCallContext) -> str:
        return f"{agent}/{context.user.user_name}"

    return resolve


class BoundedPushConfigStore(InMemoryPushNotificationConfigStore):
    """The SDK's in-memory push configs, bounded: per task, in bytes, and gone with the task.

    A task keeps its :data:`MAX_PUSH_CONFIGS_PER_TASK` newest configs; past
    ``max_bytes`` in all, the configs of the least recently set task go.
    Only the store's public methods are used (a set or a delete is rare).
    """

    def __init__(self, agent: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        super().__init__(owner_resolver=owner_of(agent))
        self.max_bytes = max_bytes
        self.bytes = 0
        self.evictions = 0
        # (principal, task id) → bytes of its configs; least recently set first.
        self._sizes: OrderedDict[tuple[str, str], int] = OrderedDict()

    async def set_info(
        self,
        task_id: str,
        notification_config: TaskPushNotificationConfig,
        context: ServerCallContext,
    ) -> TaskPushNotificationConfig:
        result = await super().set_info(task_id, notification_config, context)
        configs = await self.get_info(task_id, context)
        for old in configs[:-MAX_PUSH_CONFIGS_PER_TASK]:
            await super().delete_info(task_id, context, old.id)
        kept = configs[-MAX_PUSH_CONFIGS_PER_TASK:]
        self._resize((context.user.user_name, task_id), sum(c.ByteSize() for c in kept))
        while self.bytes > self.max_bytes and self._sizes:
            (principal, old_task), _ = next(iter(self._sizes.items()))
            await self.forget(old_task, ServerCallContext(user=PrincipalUser(principal)))
            self.evictions += 1
        return result

    async def delete_info(
        self, task_id: str, context: ServerCallContext, config_id: str | None = None
    ) -> None:
        await super().delete_info(task_id, context, config_id)
        configs = await self.get_info(task_id, context)
        self._resize((context.user.user_name, task_id), sum(c.ByteSize() for c in configs))

    async def forget(self, task_id: str, context: ServerCallContext) -> None:
        """Drop every config of a task that is gone."""
        key = (context.user.user_name, task_id)
        if key in self._sizes:  # else the SDK's store logs a warning for a task it lacks
            await super().delete_info(task_id, context)
            self._resize(key, 0)

    def _resize(self, key: tuple[str, str], size: int) -> None:
        self.bytes += size - self._sizes.pop(key, 0)
        if size:
            self._sizes[key] = size


class BoundedTaskStore(TaskStore):
    """Tasks in memory, minus the idle tasks beyond a count, a byte budget and an age.

    A running task is held as a copy (the SDK's in-memory store copied it in
    and out); an idle one as its serialized bytes, or, when the agent
    answered it in one go, as references into its context's session
    (:mod:`agenthost.adapters.a2a.answered`, once :func:`~.turns.hold_turns` has
    written its turn there: :meth:`compact`). ``get`` and ``list`` give a new
    ``Task`` each time. Sizes are the tasks' serialized (protobuf) sizes,
    history and artifacts included, taken when a task is first saved and
    whenever it is saved idle (not on each save of a running task);
    ``evictions`` counts the tasks dropped for room or age.
    """

    def __init__(
        self,
        agent: str,
        *,
        max_tasks: int,
        ttl: float,
        max_bytes: int = DEFAULT_MAX_BYTES,
        push_configs: BoundedPushConfigStore | None = None,
        memory: MemoryManager | None = None,
    ) -> None:
        self.agent = agent
        self._max, self._ttl, self.max_bytes = max_tasks, ttl, max_bytes
        self._push_configs = push_configs
        self.memory = memory
        """The agent's sessions, where an answered task's turn is read back (None: kept whole)."""
        # Task id → the task, its owner, size and idle time, in the order the tasks went
        # idle (a running one where it came in or was last idle). Task ids are the SDK's
        # UUIDs: another principal's task of the same id (never seen) is keyed by
        # (principal, task id) instead. One record a task, no key tuple
        # (bench/protocol_sessions.py).
        self._held: dict[str | tuple[str, str], _Held] = {}
        self._idle = 0  # how many of them are idle
        self.bytes = 0
        self.evictions = 0

    @property
    def size(self) -> int:
        """Tasks held."""
        return len(self._held)

    def _key(self, principal: str, task_id: str) -> str | tuple[str, str]:
        held = self._held.get(task_id)
        return task_id if held is None or held.principal == principal else (principal, task_id)

    def _find(self, principal: str, task_id: str) -> _Held | None:
        return self._held.get(self._key(principal, task_id))

    async def save(self, task: Task, context: ServerCallContext) -> None:
        principal = context.user.user_name
        key = self._key(principal, task.id)
        held = self._held.get(key)
        idle = task.status.state in IDLE_STATES
        if held is None:
            held = self._held[key] = _Held(principal)
            self._resize(held, task)
        elif idle:
            # A running task is saved once per streamed event, growing each time:
            # sizing it then made a stream's saves quadratic. It is sized when it
            # comes in and when it goes idle (the only tasks ever dropped).
            self._resize(held, task)
        held.context = None
        if idle:
            held.task = task.SerializeToString()
        else:
            held.task = Task()
            held.task.CopyFrom(task)
        self._idle += (idle and held.since is None) - (not idle and held.since is not None)
        if idle:
            held.since = time.monotonic()
            self._held[key] = self._held.pop(key)  # the most recently idle: last
        else:
            held.since = None
        await self._evict()

    def compact(self, task: Task, context: ServerCallContext, turn: Sequence[Message]) -> None:
        """``task``, saved and its run's ``turn`` written to the session, is held as
        references into that session when they rebuild it exactly
        (:func:`~agenthost.adapters.a2a.answered.pack`); else it stays as it is."""
        held = self._find(context.user.user_name, task.id)
        if self.memory is None or held is None or held.context is not None:
            return
        if not isinstance(held.task, bytes) or held.task != task.SerializeToString():
            return  # saved again since
        packed = answered.pack(task, turn)
        if packed is not None:
            held.task, held.context = packed, answered.context_of(task)

    def _resize(self, held: _Held, task: Task) -> None:
        size = task.ByteSize()
        self.bytes += size - held.size
        held.size = size

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        held = self._find(context.user.user_name, task_id)
        return None if held is None else await self._task(held, task_id)

    async def _task(
        self, held: _Held, task_id: str, sessions: dict[str, list[Message]] | None = None
    ) -> Task | None:
        """The task ``held`` keeps; an answered one's session read once per context
        in ``sessions`` (a listing's)."""
        kept = held.task
        if held.context is not None:
            assert self.memory is not None and isinstance(kept, bytes)
            messages = sessions.get(held.context) if sessions is not None else None
            if messages is None:
                key = SessionKey(self.agent, held.context, held.principal)
                session = await self.memory.get(key)
                messages = session.messages if session else []
                if sessions is not None:
                    sessions[held.context] = messages
            return answered.unpack(kept, task_id, held.context, messages)
        if isinstance(kept, bytes):
            return Task.FromString(kept)
        task = Task()
        task.CopyFrom(kept)
        return task

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The SDK's in-memory listing (filters, order, pages), over this principal's tasks."""
        principal = context.user.user_name
        listing = InMemoryTaskStore(owner_resolver=owner_of(self.agent))
        sessions: dict[str, list[Message]] = {}
        for key, held in list(self._held.items()):
            if held.principal != principal:
                continue
            wanted = params.context_id
            if wanted and held.context is not None and held.context != wanted:
                continue  # not read back from its session only to be filtered out
            task = await self._task(held, key if isinstance(key, str) else key[1], sessions)
            if task is not None:
                await listing.save(task, context)
        return await listing.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        held = self._held.pop(self._key(context.user.user_name, task_id), None)
        if held is not None:
            self.bytes -= held.size
            self._idle -= held.since is not None

    async def _evict(self) -> None:
        expired_before = time.monotonic() - self._ttl
        idle, size, dropped = self._idle, self.bytes, []
        # Idle tasks oldest first; the running ones between them are skipped.
        for key, held in self._held.items():
            if not idle:
                break
            if held.since is None:
                continue
            fits = idle <= self._max and size <= self.max_bytes
            if fits and held.since > expired_before:
                break
            dropped.append((held.principal, key if isinstance(key, str) else key[1]))
            idle, size = idle - 1, size - held.size
        for principal, task_id in dropped:
            context = ServerCallContext(user=PrincipalUser(principal))
            await self.delete(task_id, context)
            if self._push_configs is not None:
                await self._push_configs.forget(task_id, context)
            self.evictions += 1


class _Held:
    """A task the bounded store holds, and what it knows of it."""

    __slots__ = ("context", "principal", "since", "size", "task")

    def __init__(self, principal: str) -> None:
        self.principal = principal
        self.size = 0
        self.since: float | None = None  # when it went idle (monotonic); None while it runs
        self.task: Task | bytes = b""  # running: a copy; idle: serialized, or packed
        self.context: str | None = None
        """An answered task's context id: ``task`` is :func:`answered.pack`'s bytes."""


class TaskStores:
    """Builds each agent's task and push-config stores from one setting."""

    def __init__(
        self, url: str, *, max_tasks: int, ttl: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.url = url
        self._max, self._ttl, self._max_bytes = max_tasks, ttl, max_bytes
        self._push: dict[str, BoundedPushConfigStore] = {}  # in memory, by agent
        self._memory_tasks: list[BoundedTaskStore] = []
        self._database: DatabaseStores | None = None
        self._started = False
        if url == "memory":
            return
        if url.startswith("sqlite:///"):
            path = url.removeprefix("sqlite:///")
            self._database = _database("sqlite+aiosqlite:///" + path, shared=False)
        elif url.startswith(("postgresql+asyncpg://", "postgresql://", "postgres://")):
            rest = url.split("://", 1)[1]
            self._database = _database("postgresql+asyncpg://" + rest, shared=True)
        else:
            raise TaskStoreError(
                f"unknown A2A task store {url!r}: use 'memory', 'sqlite:///path/to/tasks.db' "
                "or 'postgresql+asyncpg://user:password@host/database'"
            )

    @property
    def event_stream(self) -> DatabaseTaskEventStream | None:
        """The stream every replica's subscribers follow (PostgreSQL only)."""
        return self._database.event_stream if self._database is not None else None

    @property
    def outage(self) -> Outage | None:
        """Whether the shared database is down, for the handlers to refuse at once (PostgreSQL)."""
        return self._database.outage if self._database is not None and self.shared else None

    def bounded(self) -> list[tuple[str, BoundedTaskStore | BoundedPushConfigStore]]:
        """The in-memory stores, named ``tasks`` and ``push_configs`` (for their evictions)."""
        return [("tasks", t) for t in self._memory_tasks] + [
            ("push_configs", p) for p in self._push.values()
        ]

    @property
    def shared(self) -> bool:
        """Whether the tasks are shared by replicas (versioned, with an event stream)."""
        return self.event_stream is not None

    @property
    def initialized(self) -> bool:
        """Whether the stores are ready (a database's tables made)."""
        return self._database.initialized if self._database is not None else self._started

    def tasks(
        self, agent: str, memory: MemoryManager | None = None
    ) -> TaskStore | VersionedDatabaseTaskStore:
        """``agent``'s task store; in memory, its answered tasks read back from ``memory``
        (the agent's sessions) if given."""
        if self._database is not None:
            return self._database.tasks(owner_of(agent))
        tasks = BoundedTaskStore(
            agent,
            max_tasks=self._max,
            ttl=self._ttl,
            max_bytes=self._max_bytes,
            push_configs=self._memory_push_configs(agent),
            memory=memory,
        )
        self._memory_tasks.append(tasks)
        return tasks

    def push_configs(self, agent: str) -> PushNotificationConfigStore:
        if self._database is not None:
            return self._database.push_configs(owner_of(agent))
        return self._memory_push_configs(agent)

    def _memory_push_configs(self, agent: str) -> BoundedPushConfigStore:
        if agent not in self._push:
            self._push[agent] = BoundedPushConfigStore(agent, max_bytes=self._max_bytes)
        return self._push[agent]

    async def start(self) -> None:
        """Create the tables (once, before serving).

        A shared database that cannot be reached does not stop the server:
        the tables are made in the background as soon as it answers, and
        :meth:`health` says ``down`` (``/readyz`` 503) until then.
        """
        if self._database is not None:
            await self._database.start()
        self._started = True

    async def create_tables(self) -> bool:
        """Make the database's tables now, or raise (``agenthost migrate``, run before a
        release's pods start); False for the in-memory store, which has none."""
        if self._database is None:
            return False
        self.tasks(MIGRATION)  # one store of each kind: their tables
        self.push_configs(MIGRATION)
        await self._database.create_tables()
        return True

    async def health(self) -> dict[str, str]:
        """``{"a2a_task_store": "up" | "down"}`` for a shared database; else empty.

        Down until the tables are made; after that, whether the database
        answers a ``SELECT 1`` now, within its time bound.
        """
        if self._database is None or not self.shared:
            return {}
        up = self._database.initialized and await self._database.answers()
        return {"a2a_task_store": "up" if up else "down"}

    async def aclose(self) -> None:
        if self._database is not None:
            await self._database.aclose()


def _database(url: str, *, shared: bool) -> DatabaseStores:
    """The database stores, imported now: SQLAlchemy only when a database is configured."""
    from agenthost.adapters.a2a.databases import DatabaseStores

    return DatabaseStores(url, shared=shared)
