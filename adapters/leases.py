"""Run leases: a replica that dies mid-run must not leave the run "in progress" for ever.

The replica running a piece of shared work (an IBM ACP run) holds a lease
on it in the shared store: a key with a short TTL (``lease_seconds``) that
it refreshes every third of that while the work runs. Another replica that
reads the work as still running checks the lease; gone means the replica
running it died (SIGKILL, OOM, a lost node), and the reader records the
work as failed. A replica that stops normally ends its runs first
(``app/serving.py``), so only a death leaves a lease to expire.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Protocol, runtime_checkable

from agenthost.agents import MemoryManager
from agenthost.agents.cancelling import cancel_and_wait
from agenthost.agents.errors import StoreUnavailable

logger = logging.getLogger("agenthost")

DEFAULT_LEASE_SECONDS = 15.0


@runtime_checkable
class LeaseMemory(Protocol):
    """A shared store that holds short-lived marks (Redis keys with a TTL)."""

    shared: bool

    async def set_lease(self, name: str, seconds: float) -> None: ...

    async def has_lease(self, name: str) -> bool: ...


class Leases:
    """The leases of one protocol's work, in a store every replica shares."""

    def __init__(self, memory: LeaseMemory, protocol: str, seconds: float) -> None:
        self.memory = memory
        self.protocol = protocol
        self.seconds = seconds

    @classmethod
    def of(cls, memory: MemoryManager, protocol: str, seconds: float) -> Leases | None:
        """Leases when ``memory`` is shared by replicas; else None (one process)."""
        if isinstance(memory, LeaseMemory) and memory.shared:
            return cls(memory, protocol, seconds)
        return None

    def _name(self, principal: str, id: str) -> str:
        return f"lease:{self.protocol}:{principal}|{id}"

    async def take(self, principal: str, id: str) -> None:
        """Hold the lease on ``id`` for ``seconds`` from now."""
        await self.memory.set_lease(self._name(principal, id), self.seconds)

    async def alive(self, principal: str, id: str) -> bool:
        """Whether a replica holds the lease on ``id`` (runs it, and lives)."""
        return await self.memory.has_lease(self._name(principal, id))

    @asynccontextmanager
    async def held(self, principal: str, id: str) -> AsyncIterator[None]:
        """Refresh the lease on ``id`` while inside (a store outage only skips refreshes)."""
        stop = asyncio.Event()
        task = asyncio.create_task(self._refresh(principal, id, stop), name=f"lease-{id}")
        try:
            yield
        finally:
            stop.set()
            await cancel_and_wait(task)

    async def _refresh(self, principal: str, id: str, stop: asyncio.Event) -> None:
        # The stop flag, not the cancel alone, ends the loop: a cancel that lands
        # inside the store's client can be swallowed there (seen with redis-py under
        # load), and the loop then refreshed for ever while held() waited for it.
        while not stop.is_set():
            with suppress(StoreUnavailable):
                await self.take(principal, id)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.seconds / 3)
