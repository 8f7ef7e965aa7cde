"""Run a framework's stream in a task of its own.

pydantic-ai and LangGraph set context variables when a run starts and reset
them when it ends. An agent's update generator may be resumed from several
tasks (adapters do), so a framework's stream iterated inside it would reset
its variables in another context and fail: the stream runs in one task and
hands its text over through a queue instead. Closing the generator cancels
that task.

A cancelled framework may leave async generators suspended at a ``yield``:
BeeAI's chat model iterates its model stream without closing it, so a run
cancelled while it handles a token keeps the model's HTTP stream open until
the garbage collector finds the cycle (seen: the upstream kept streaming to
its end). The task's generators are tracked from their first step (Python's
async generator hooks) and those still suspended are closed, newest first,
once the task is cancelled.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass
from types import AsyncGeneratorType
from typing import Any, Generic, TypeAlias, TypeVar

from agenthost.agents.cancelling import cancel_and_wait

T = TypeVar("T")
U = TypeVar("U")
Emit = Callable[[str], None]

_Generators: TypeAlias = "weakref.WeakValueDictionary[int, AsyncGeneratorType[Any, Any]]"
_tracked: ContextVar[_Generators | None] = ContextVar("agenthost_tracked_generators", default=None)
_order = itertools.count()


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """What the producer returned, after all its text."""

    value: T


async def stream_in_task(
    produce: Callable[[Callable[[U], None]], Awaitable[T]],
) -> AsyncGenerator[U | Finished[T], None]:
    """Yield what ``produce(emit)`` emits (text, updates) as it comes, then :class:`Finished`."""
    chunks: asyncio.Queue[U | None] = asyncio.Queue()
    generators: _Generators = weakref.WeakValueDictionary()

    async def run() -> T:
        _track_generators()
        _tracked.set(generators)  # this task's context, and its child tasks'
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
            try:
                await cancel_and_wait(task)
            finally:
                await _close_suspended(generators)


async def _close_suspended(generators: _Generators) -> None:
    for generator in reversed(list(generators.values())):
        if generator.ag_frame is not None and not generator.ag_running:
            with suppress(Exception):
                await generator.aclose()


def _track_generators() -> None:
    """Put the tracking hook in front of the running loop's own (asyncio sets its hooks
    when a loop starts, so this is checked at every run)."""
    first_iteration, finalizer = sys.get_asyncgen_hooks()
    if getattr(first_iteration, "tracks", False):
        return

    def hook(generator: AsyncGenerator[Any, Any]) -> None:
        _first_iteration(generator)
        if first_iteration is not None:
            first_iteration(generator)

    hook.tracks = True  # type: ignore[attr-defined]
    sys.set_asyncgen_hooks(firstiter=hook, finalizer=finalizer)


def _first_iteration(generator: AsyncGenerator[Any, Any]) -> None:
    if (generators := _tracked.get()) is not None and isinstance(generator, AsyncGeneratorType):
        generators[next(_order)] = generator
