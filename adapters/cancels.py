"""Cross-replica cancel: one channel every adapter uses to stop a run on another replica.

A cancel that reaches a replica which does not run the work is published
on the shared store's topic ``cancel:<protocol>`` (Redis pub/sub); every
replica listens, and the one running the work stops it (cancels its task,
which stops the model call and the tools). The message names the principal,
so a replica never stops another key's work. Without a shared store there is
no channel (one process runs everything).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, runtime_checkable

import orjson

from agenthost.agents import MemoryManager

logger = logging.getLogger("agenthost")

Stop = Callable[[str, str], Awaitable[None]]
"""``stop(principal, id)``: stop that work if it runs here."""


@runtime_checkable
class SharedMemory(Protocol):
    """A memory manager every replica shares, with messages between replicas."""

    shared: bool

    async def publish(self, topic: str, message: bytes) -> None: ...

    def subscribe(self, topic: str) -> AsyncIterator[bytes]: ...


def is_shared(memory: MemoryManager) -> bool:
    return isinstance(memory, SharedMemory) and bool(memory.shared)


class CancelChannel:
    """Cancels of one protocol's work, between replicas."""

    def __init__(self, memory: SharedMemory, protocol: str) -> None:
        self.memory = memory
        self.topic = f"cancel:{protocol}"

    @classmethod
    def of(cls, memory: MemoryManager, protocol: str) -> CancelChannel | None:
        """The channel when ``memory`` is shared by replicas; else None."""
        return cls(memory, protocol) if isinstance(memory, SharedMemory) and memory.shared else None

    async def send(self, principal: str, id: str) -> None:
        """Ask every replica to stop ``id`` of ``principal`` if it runs there."""
        await self.memory.publish(self.topic, orjson.dumps([principal, id]))

    async def listen(self, stop: Stop) -> None:
        """Call ``stop(principal, id)`` for every cancel sent, until cancelled."""
        async for message in self.memory.subscribe(self.topic):
            try:
                principal, id = orjson.loads(message)
                await stop(principal, id)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("a cancel from another replica could not be handled")
