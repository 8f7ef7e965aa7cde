"""A time-out on the waits of a stream, one timer for the whole stream.

``async with asyncio.timeout(t)`` around each wait for an upstream event
builds a ``Timeout``, arms a timer and cancels it again: about a fifth of
the ``openai`` provider's CPU per relayed chunk (``bench/relay.py provider``,
py-spy). :class:`IdleDeadline` keeps one timer per stream instead: each
wait only moves the due time, and the timer, when it fires early, re-arms
itself at the due time (at most once per ``timeout`` seconds). A wait that
lasts ``timeout`` seconds is cancelled and reads as a time-out, as with
``asyncio.timeout``; a cancel from elsewhere stays a cancel. No coroutine
of its own around the wait: a resumed chunk passes through one frame less.
"""

from __future__ import annotations

import asyncio


class IdleDeadline:
    """Bounds each wait to ``timeout`` seconds; :meth:`close` when done. A wait::

    deadline.arm()
    try:
        value = await something
    except asyncio.CancelledError:
        if deadline.expired():
            raise TimeoutError from None
        raise
    finally:
        deadline.disarm()
    """

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[object] | None = None  # the task waiting, if any
        self._due = 0.0
        self._cancelling = 0
        self._expired = False

    def arm(self) -> None:
        """A wait starts: it may last ``timeout`` seconds. Call :meth:`disarm` after it."""
        task = asyncio.current_task()
        assert task is not None, "IdleDeadline waits run in a task"
        self._due = self._loop.time() + self._timeout
        self._task, self._cancelling = task, task.cancelling()
        if self._timer is None:
            self._timer = self._loop.call_at(self._due, self._check)

    def expired(self) -> bool:
        """Called on the CancelledError of a wait: whether the deadline sent it.

        Then the cancel is taken back (a cancel from elsewhere, pending too,
        stays: the test ``asyncio.timeout`` makes) and the wait has timed out.
        """
        task = self._task
        if not self._expired or task is None:
            return False
        self._expired = False
        return task.uncancel() <= self._cancelling

    def disarm(self) -> None:
        """The wait is over (the timer stays, moved by the next :meth:`arm`)."""
        if self._expired and self._task is not None:
            # Fired, but the wait ended some other way: the cancel is taken back
            # all the same, as asyncio.timeout's exit does.
            self._task.uncancel()
        self._task = None
        self._expired = False

    def _check(self) -> None:
        self._timer = None
        task = self._task
        if task is None:
            return  # between waits: the next wait arms a timer again
        if self._loop.time() < self._due:
            self._timer = self._loop.call_at(self._due, self._check)
            return
        self._expired = True
        task.cancel()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
