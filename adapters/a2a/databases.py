"""A2A tasks and push configs in a database: SQLite, or PostgreSQL shared by replicas.

Imported only when the task store setting names a database
(:mod:`agenthost.adapters.a2a.tasks`): SQLAlchemy and the SDK's database
stores cost a second of start-up that the default ``memory`` store never
needs (:mod:`agenthost.adapters.a2a.sdk_databases`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from agenthost.adapters.a2a import sdk_databases
from agenthost.adapters.a2a.errors import TaskStoreUnavailable

sdk_databases.load()

from a2a.server.cluster.database_event_stream import DatabaseTaskEventStream  # noqa: E402
from a2a.server.cluster.database_task_store import VersionedDatabaseTaskStore  # noqa: E402
from a2a.server.owner_resolver import OwnerResolver  # noqa: E402
from a2a.server.tasks.database_push_notification_config_store import (  # noqa: E402
    DatabasePushNotificationConfigStore,
)
from a2a.server.tasks.database_task_store import DatabaseTaskStore  # noqa: E402
from sqlalchemy import exc as sa  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.exc import SQLAlchemyError  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine  # noqa: E402

logger = logging.getLogger("agenthost.a2a")

HEALTH_SECONDS = 2.0
"""The longest a /readyz check of the shared task database takes."""
PROBE_SECONDS = 1.0
"""While the shared task database is down, how often it is asked whether it is back."""


def _connection_errors() -> tuple[type[BaseException], ...]:
    """What a database that cannot be reached raises, through SQLAlchemy or from asyncpg."""
    errors: tuple[type[BaseException], ...] = (
        OSError,  # refused, reset: asyncpg's connect raises these as they are
        TimeoutError,
        sa.OperationalError,
        sa.InterfaceError,
        sa.TimeoutError,  # no pooled connection came back in time
        sa.DisconnectionError,
    )
    try:
        import asyncpg  # type: ignore[import-untyped]
    except ImportError:  # SQLite only
        return errors
    return (
        *errors,
        asyncpg.PostgresConnectionError,
        asyncpg.InterfaceError,  # "connection is closed", "another operation in progress"
        asyncpg.exceptions.OperatorInterventionError,  # shutting down, starting up
    )


CONNECTION_ERRORS = _connection_errors()


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps, or a member of its group) says the database is gone."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        error = pending.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, CONNECTION_ERRORS):
            return True
        if isinstance(error, sa.DBAPIError) and error.connection_invalidated:
            return True
        if isinstance(error, BaseExceptionGroup):
            pending.extend(error.exceptions)
        pending.extend(e for e in (error.__cause__, error.__context__) if e is not None)
    return False


REQUEST_LOGGERS = (
    "a2a.utils.error_handlers",
    "a2a.server.routes.jsonrpc_dispatcher",
    "a2a.server.routes.rest_dispatcher",
)
"""Where the SDK (and the adapter's fronts, in its words) log each request's error."""


class _Refusals(logging.Filter):
    """Drops the per-request line of each refusal: the outage's one warning says it all
    (the attack round saw ~20 lines a second per replica)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return TaskStoreUnavailable.message not in record.getMessage()


def _quiet_refusals() -> None:
    for name in REQUEST_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(f, _Refusals) for f in log.filters):
            log.addFilter(_Refusals())


class Outage:
    """Whether the shared task database is down, as the requests find it.

    The first request that finds it gone logs one warning and starts a probe
    (``SELECT 1`` every :data:`PROBE_SECONDS`); until the probe gets an answer
    every request is refused at once with :class:`TaskStoreUnavailable`, before
    it starts anything (no run, no turn stored that its client never sees, no
    half-made subscription left behind). The probe logs one line when the
    database is back, and drops the pool of connections the outage broke.
    """

    def __init__(self, engine: AsyncEngine, answers: Callable[[], Awaitable[bool]]) -> None:
        self._engine = engine
        self._answers = answers
        self.down = False
        self.since = 0.0
        self.refused = 0
        self._probe: asyncio.Task[None] | None = None
        _quiet_refusals()

    def check(self) -> None:
        """Raise :class:`TaskStoreUnavailable` while the database is known to be down."""
        if self.down:
            self.refused += 1
            raise TaskStoreUnavailable

    def translate(self, exc: BaseException) -> BaseException:
        """``exc``, or :class:`TaskStoreUnavailable` if it says the database is gone."""
        if not is_outage(exc):
            return exc
        self.refused += 1
        if not self.down:
            self.down, self.since = True, time.monotonic()
            logger.warning(
                "A2A task store unreachable (%s: %s); A2A requests get 'unavailable' until "
                "it answers",
                type(exc).__name__,
                exc,
            )
            self._probe = asyncio.create_task(self._until_up(), name="A2A task store probe")
        return TaskStoreUnavailable()

    async def _until_up(self) -> None:
        while not await self._answers():  # noqa: ASYNC110 (nothing to wait on but the database)
            await asyncio.sleep(PROBE_SECONDS)
        # Connections made before the outage are dead; the ones its requests never gave
        # back would still count against the pool and make the next requests wait.
        await self._engine.dispose()
        logger.info(
            "A2A task store reachable again after %.1f s (%d requests refused)",
            time.monotonic() - self.since,
            self.refused,
        )
        self.down, self.refused = False, 0

    def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()


class DatabaseStores:
    """Every agent's task and push-config stores in one database (``url`` is SQLAlchemy's).

    ``shared`` (PostgreSQL): versioned tasks and an event stream that every
    replica follows; a database that cannot be reached at start does not stop
    the server (the tables are made once it answers).
    """

    def __init__(self, url: str, *, shared: bool) -> None:
        if shared:
            self._engine = create_async_engine(url, pool_pre_ping=True, pool_timeout=10)
            self.event_stream: DatabaseTaskEventStream | None = DatabaseTaskEventStream(
                self._engine
            )
        else:
            self._engine = create_async_engine(url)
            self.event_stream = None
        self._stores: list[
            DatabaseTaskStore | VersionedDatabaseTaskStore | DatabasePushNotificationConfigStore
        ] = []
        self.initialized = False
        self._retry: asyncio.Task[None] | None = None
        self.outage = Outage(self._engine, self.answers)

    def tasks(self, owner: OwnerResolver) -> DatabaseTaskStore | VersionedDatabaseTaskStore:
        store: DatabaseTaskStore | VersionedDatabaseTaskStore
        if self.event_stream is not None:
            store = VersionedDatabaseTaskStore(self._engine, owner_resolver=owner)
        else:
            store = DatabaseTaskStore(self._engine, owner_resolver=owner)
        self._stores.append(store)
        return store

    def push_configs(self, owner: OwnerResolver) -> DatabasePushNotificationConfigStore:
        store = DatabasePushNotificationConfigStore(self._engine, owner_resolver=owner)
        self._stores.append(store)
        return store

    async def start(self) -> None:
        """Create the tables; a shared database that is down is retried in the background."""
        if self.event_stream is None:
            await self._initialize()
            self.initialized = True
            return
        try:
            await self._initialize()
            self.initialized = True
        except (OSError, SQLAlchemyError) as exc:
            logger.warning("A2A task store unreachable at start (%s); retrying", exc)
            self._retry = asyncio.create_task(self._initialize_when_up())

    async def create_tables(self) -> None:
        """Make the tables now, or raise (``agenthost migrate``: before a release's pods)."""
        await self._initialize()
        self.initialized = True

    async def _initialize(self) -> None:
        for store in self._stores:
            await store.initialize()
        if self.event_stream is not None:
            await self.event_stream.initialize()

    async def _initialize_when_up(self) -> None:
        while not self.initialized:
            await asyncio.sleep(2)
            try:
                await self._initialize()
                self.initialized = True
                logger.info("A2A task store reachable: tables ready")
            except (OSError, SQLAlchemyError):
                continue

    async def answers(self) -> bool:
        """Whether the database answers a ``SELECT 1`` now, within :data:`HEALTH_SECONDS`."""
        try:
            async with asyncio.timeout(HEALTH_SECONDS):
                async with self._engine.connect() as connection:
                    await connection.execute(text("SELECT 1"))
        except (OSError, SQLAlchemyError, TimeoutError):
            return False
        return True

    async def aclose(self) -> None:
        self.outage.close()
        if self._retry is not None:
            self._retry.cancel()
        await self._engine.dispose()
