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
Emit = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """What the producer returned, after all its text."""

    value: T


async def stream_in_task(
    produce: Callable[[Emit], Awaitable[T]],
) -> AsyncGenerator[str | Finished[T], None]:
    """Yield the text ``produce(emit)`` emits as it comes, then :class:`Finished`."""
    chunks: asyncio.Queue[str | None] = asyncio.Queue()

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


U = TypeVar("U")


async def items_in_task(
    produce: Callable[[Callable[[U], None]], Awaitable[T]],
) -> AsyncGenerator[U | Finished[T], None]:
    """:func:`stream_in_task` for any items (run updates, not only text)."""
    items: asyncio.Queue[tuple[U] | None] = asyncio.Queue()

    async def run() -> T:
        try:
            return await produce(lambda item: items.put_nowait((item,)))
        finally:
            items.put_nowait(None)

    task = asyncio.ensure_future(run())
    try:
        while (boxed := await items.get()) is not None:
            yield boxed[0]
        yield Finished(await task)
    finally:
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
