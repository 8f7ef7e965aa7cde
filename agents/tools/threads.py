"""Bounds on the daemon threads sync tools run in: one per tool, under a shared ceiling.

A sync function cannot be interrupted, so a hung call keeps its thread after
its caller gave up; bounds count threads until they *end*, abandoned ones
included. Each :class:`~agents.tools.functions.Tool` has a bound of its own
(:data:`MAX_THREADS_PER_TOOL`), so one tool's hung calls can only make
*that* tool wait, never another. Per tool rather than per agent: the tool is
what hangs (its code, its upstream), a tool object is shared by every agent
that lists it, and a per-agent bound would let one hung tool starve the same
agent's other tools. Every user tool's bound sits under one ceiling
(:data:`USER_THREADS`, :data:`MAX_SYNC_THREADS`) that caps the threads the
process can pile up; the built-in tools have a ceiling of their own
(:data:`BUILTIN_THREADS`), so they never wait behind user tools.
"""

from __future__ import annotations

import threading

import anyio

MAX_SYNC_THREADS = 64
"""Threads all user sync tools may hold at once, abandoned ones included."""
MAX_THREADS_PER_TOOL = 8
"""Threads one sync tool may hold at once, unless it says otherwise."""
MAX_BUILTIN_THREADS = 16
"""Threads the built-in sync tools (``calculator``, ``current_time``) may hold at once."""
_POLL = 0.01


class ThreadLimit:
    """At most ``limit`` threads at once; a thread also takes a place under ``ceiling``.

    Thread-safe: the thread that took a place releases it when it ends. Waiting
    is polled (a thread-safe lock cannot be awaited), so a cancelled wait takes
    nothing.
    """

    def __init__(self, limit: int, ceiling: ThreadLimit | None = None) -> None:
        if limit < 1:
            raise ValueError("a thread limit must be at least 1")
        self.limit = limit
        self.ceiling = ceiling
        self._places = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._taken = 0

    @property
    def taken(self) -> int:
        """Places held now (by running threads, abandoned ones included)."""
        return self._taken

    def try_take(self) -> bool:
        """Take a place here and under the ceiling, or neither; never waits."""
        if not self._places.acquire(blocking=False):
            return False
        if self.ceiling is not None and not self.ceiling.try_take():
            self._places.release()
            return False
        with self._lock:
            self._taken += 1
        return True

    async def take(self) -> None:
        """Wait for a place (and one under the ceiling)."""
        while not self.try_take():  # noqa: ASYNC110 - threads release it, nothing to await
            await anyio.sleep(_POLL)

    def release(self) -> None:
        """Give back a place taken by :meth:`try_take` or :meth:`take`."""
        with self._lock:
            self._taken -= 1
        self._places.release()
        if self.ceiling is not None:
            self.ceiling.release()


USER_THREADS = ThreadLimit(MAX_SYNC_THREADS)
"""The ceiling over every user sync tool's own bound."""
BUILTIN_THREADS = ThreadLimit(MAX_BUILTIN_THREADS)
"""The ceiling of the built-in sync tools, apart from the user tools'."""
