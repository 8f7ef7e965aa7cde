"""A run's hand-off to its live reader, bounded: the run waits while the reader lags.

A streamed Chat Completion needs none: its run is pulled through the
response, so a client that stops reading stops it once uvicorn's send
buffer is full. An A2A task's run and an IBM ACP run are not: they write
into queues (the A2A SDK's, whose sizes it does not let us set) or into the
run's event log, which a stream reads on its own, so a stream that is never
read let its run go on to its end, everything waiting in memory for it.

:class:`HandOff` sits between such a run and the one stream that reads it
live. The run counts each item it hands over (:meth:`HandOff.handed`) and
waits for :meth:`HandOff.room` before the next one; the stream counts each
item it takes (:meth:`HandOff.took`, oldest first: items reach it in the
order they were handed). The run waits while ``max_bytes`` (or
``max_items``) are handed and not taken, until the reader takes more or is
gone (:meth:`HandOff.close`: a client that left, a stream that ended). The
run then goes on as it did before (an A2A task to its end in the task
store, a detached run in its log): what a run records for itself is never
bounded here, only what waits for a live reader.

Every item handed reaches the reader in order unless its stream ends (the
SDK ends a subscriber's stream when it drops events for it), so a reader
that reads, however slowly, always makes room: the run never waits on an
item that will not come.

:func:`read` is the reader's side around any async iterator.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar

T = TypeVar("T")

MAX_BYTES = 64 * 1024
"""Bytes handed and not taken past which a run waits (uvicorn's send buffer holds as much)."""


class HandOff:
    """What a run handed its live reader and the reader has not taken yet, bounded."""

    __slots__ = ("_sizes", "_wake", "closed", "max_bytes", "max_items", "waiting")

    def __init__(self, max_bytes: int = MAX_BYTES, max_items: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.max_items = max_items
        self.waiting = 0
        """Bytes handed and not taken."""
        self.closed = False
        self._sizes: deque[int] = deque()
        self._wake: asyncio.Event | None = None  # made by a run that waits

    @property
    def full(self) -> bool:
        """The run must wait before it hands over more."""
        if self.closed:
            return False
        over_items = self.max_items is not None and len(self._sizes) >= self.max_items
        return over_items or self.waiting >= self.max_bytes

    def handed(self, size: int) -> None:
        """The run handed an item of ``size`` bytes to the reader."""
        if not self.closed:
            self._sizes.append(size)
            self.waiting += size

    async def room(self) -> None:
        """Wait until the reader has taken enough (or waits, or is gone)."""
        while self.full:
            if self._wake is None:
                self._wake = asyncio.Event()
            await self._wake.wait()

    def took(self) -> None:
        """The reader took the oldest item handed."""
        if self._sizes:
            self.waiting -= self._sizes.popleft()
        self._notify()

    def close(self) -> None:
        """The reader is gone: the run no longer waits for it."""
        self.closed = True
        self._sizes.clear()
        self.waiting = 0
        self._notify()

    def _notify(self) -> None:
        if self._wake is not None and not self.full:
            self._wake.set()
            self._wake = None


async def read(items: AsyncIterator[T], hand_off: HandOff) -> AsyncGenerator[T, None]:
    """``items`` as the live reader of ``hand_off``: each one taken as it is passed on;
    closed (with ``items``) however the reading ends."""
    try:
        async for item in items:
            hand_off.took()
            yield item
    finally:
        hand_off.close()
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()
