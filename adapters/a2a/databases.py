"""A2A tasks and push configs in a database: SQLite, or PostgreSQL shared by replicas.

Imported only when the task store setting names a database
(:mod:`agenthost.adapters.a2a.tasks`): SQLAlchemy and the SDK's database
stores cost a second of start-up that the default ``memory`` store never
needs (:mod:`agenthost.adapters.a2a.sdk_databases`).
"""

from __future__ import annotations

import asyncio
import logging

from agenthost.adapters.a2a import sdk_databases

sdk_databases.load()

from a2a.server.cluster.database_event_stream import DatabaseTaskEventStream  # noqa: E402
from a2a.server.cluster.database_task_store import VersionedDatabaseTaskStore  # noqa: E402
from a2a.server.owner_resolver import OwnerResolver  # noqa: E402
from a2a.server.tasks.database_push_notification_config_store import (  # noqa: E402
    DatabasePushNotificationConfigStore,
)
from a2a.server.tasks.database_task_store import DatabaseTaskStore  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.exc import SQLAlchemyError  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402

logger = logging.getLogger("agenthost.a2a")

HEALTH_SECONDS = 2.0
"""The longest a /readyz check of the shared task database takes."""


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
        if self._retry is not None:
            self._retry.cancel()
        await self._engine.dispose()
