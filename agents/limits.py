"""Bounds on a run: its output size and duration, and the server's shutdown.

A streamed run is driven by a task of its own that hands its updates over
a queue; the caller waits on that queue with the run's deadline. So a run
that goes over a bound, or that the server interrupts while shutting down,
is cancelled where it is (its model call and tools stop) and the caller
gets one clean error (:class:`RunLimitExceeded`, :class:`RunInterrupted`)
that each adapter ends its stream with. Cancelling inside the caller's own
task instead would strike wherever the caller happens to be, e.g. halfway
through writing an event to the socket.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable
from dataclasses import dataclass
from typing import Final, TypeVar

import anyio

from agents.errors import AgentError
from agents.results import RunUpdate, TextDelta

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Per-run bounds; ``None`` means unbounded."""

    max_output_chars: int | None = None
    max_seconds: float | None = None

    def merged(self, override: RunLimits) -> RunLimits:
        """``override``'s bounds where set, these elsewhere."""
        return RunLimits(
            override.max_output_chars
            if override.max_output_chars is not None
            else self.max_output_chars,
            override.max_seconds if override.max_seconds is not None else self.max_seconds,
        )

    @property
    def unbounded(self) -> bool:
        return self.max_output_chars is None and self.max_seconds is None


_defaults = RunLimits()


def set_default_limits(limits: RunLimits) -> None:
    """The process-wide bounds (the server's settings); an agent's own ``limits`` win."""
    global _defaults
    _defaults = limits


def effective_limits(own: RunLimits) -> RunLimits:
    """The bounds a run of an agent with ``own`` limits gets."""
    return _defaults.merged(own)


class RunLimitExceeded(AgentError):
    """A run went over its output size or duration; it was stopped."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


class RunInterrupted(AgentError):
    """The server stopped the run (it is shutting down); another replica can take it."""


class _LiveRuns:
    """Every run in progress, so that a shutdown can end them all cleanly."""

    def __init__(self) -> None:
        self._runs: weakref.WeakSet[_Bounded] = weakref.WeakSet()
        self.reason: str | None = None

    def add(self, run: _Bounded) -> None:
        self._runs.add(run)

    def interrupt_all(self, reason: str) -> int:
        """Interrupt every live run with ``reason``; returns how many there were."""
        runs = list(self._runs)
        for run in runs:
            run.interrupt(reason)
        return len(runs)


LIVE_RUNS: Final = _LiveRuns()
"""The process's live runs (one event loop per process)."""


class _Bounded:
    """One run under its limits: a cancel scope the limits and a shutdown can trip."""

    __slots__ = ("__weakref__", "_deadline", "_limits", "_reason", "_scope", "_text")

    def __init__(self, limits: RunLimits) -> None:
        self._limits = limits
        self._text = 0
        self._reason: AgentError | None = None
        self._scope: anyio.CancelScope | None = None
        self._deadline = (
            time.monotonic() + limits.max_seconds if limits.max_seconds is not None else math.inf
        )
        LIVE_RUNS.add(self)

    def interrupt(self, reason: str) -> None:
        self._stop(RunInterrupted(reason))

    def _stop(self, reason: AgentError) -> None:
        if self._reason is None:
            self._reason = reason
        if self._scope is not None:
            self._scope.cancel()

    def count(self, update: RunUpdate) -> None:
        limit = self._limits.max_output_chars
        if limit is None or not isinstance(update, TextDelta):
            return
        self._text += len(update.text)
        if self._text > limit:
            self._stop(_too_long(limit))

    def timed_out(self) -> RunLimitExceeded:
        return RunLimitExceeded(
            f"the run took longer than {self._limits.max_seconds:g} s; it was stopped",
            code="run_timeout",
        )

    async def result(self, work: Awaitable[T]) -> T:
        """Await ``work`` (in this task) within the bounds."""
        with anyio.CancelScope(deadline=self._deadline) as self._scope:
            if self._reason is not None:
                self._scope.cancel()
            return await work
        raise self._reason or self.timed_out()

    async def stream(
        self, updates: AsyncGenerator[RunUpdate, None]
    ) -> AsyncGenerator[RunUpdate, None]:
        """Drive ``updates`` in a task of its own and relay them within the bounds."""
        queue: asyncio.Queue[RunUpdate | Exception | None] = asyncio.Queue(maxsize=1)
        producer = asyncio.create_task(_produce(updates, queue))
        try:
            while True:
                with anyio.CancelScope(deadline=self._deadline) as scope:
                    self._scope = scope
                    if self._reason is not None:
                        scope.cancel()
                    item = await queue.get()
                self._scope = None
                if scope.cancelled_caught:
                    raise self._reason or self.timed_out()
                if item is None:
                    return
                if isinstance(item, Exception):
                    raise item
                self.count(item)
                if self._reason is not None:
                    raise self._reason
                yield item
        finally:
            producer.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(producer, return_exceptions=True)


def check_output(limits: RunLimits, output: str) -> None:
    """Refuse a finished answer over the size bound (a run not streamed is checked here)."""
    limit = effective_limits(limits).max_output_chars
    if limit is not None and len(output) > limit:
        raise _too_long(limit)


def _too_long(limit: int) -> RunLimitExceeded:
    return RunLimitExceeded(
        f"the answer grew beyond {limit} characters; the run was stopped",
        code="output_limit_exceeded",
    )


async def _produce(
    updates: AsyncGenerator[RunUpdate, None], queue: asyncio.Queue[RunUpdate | Exception | None]
) -> None:
    """Run the generator to its end in this task; an error or the end goes into the queue."""
    try:
        async for update in updates:
            await queue.put(update)
        await queue.put(None)
    except Exception as exc:
        await queue.put(exc)
    finally:
        await updates.aclose()


async def bounded_result(limits: RunLimits, work: Awaitable[T]) -> T:
    """Await a non-streamed run within ``limits`` (and the server's shutdown)."""
    return await _Bounded(effective_limits(limits)).result(work)


def bounded_stream(
    limits: RunLimits, updates: AsyncGenerator[RunUpdate, None]
) -> AsyncGenerator[RunUpdate, None]:
    """Relay a streamed run's updates within ``limits`` (and the server's shutdown)."""
    return _Bounded(effective_limits(limits)).stream(updates)
