"""Run a framework's stream in a task of its own.

pydantic-ai and LangGraph set context variables when a run starts and reset
them when it ends. An agent's update generator may be resumed from several
tasks (adapters do), so a framework's stream iterated inside it would reset
its variables in another context and fail: the stream runs in one task and
hands its text over through a queue instead. Closing the generator cancels
that task.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")
Emit = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """What the producer returned, after all its text."""

    value: T


async def stream_in_task(
    produce: Callable[[Callable[[U], None]], Awaitable[T]],
) -> AsyncGenerator[U | Finished[T], None]:
    """Yield what ``produce(emit)`` emits (text, updates) as it comes, then :class:`Finished`."""
    chunks: asyncio.Queue[U | None] = asyncio.Queue()

    async def run() -> T:
        try:
            return await produce(chunks.put_nowait)
        finally:
            chunks.put_nowait(None)

    task = asyncio.ensure_future(run())
    try:
        while (chunk := await chunks.get()) is not None:
            yield chunk
        yield Finished(await task)
    finally:
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
