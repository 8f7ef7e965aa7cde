"""A loop-lag watchdog: every stall of the event loop over a threshold is
logged and counted, naming the task (and the line) that held the loop.

A heartbeat on the loop marks the time every ``interval``; a daemon thread
watches it. When the heartbeat is late by more than ``threshold`` the thread
logs a warning with the loop's current task and the frame it is running
(read from another thread, so it sees the culprit while it blocks), and when
the loop comes back the heartbeat logs how long the stall lasted. A C call
that holds the GIL (one huge integer power) also stops the thread; the stall
is then reported, with its length, when the loop comes back.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

logger = logging.getLogger("agenthost.watchdog")


class LoopWatchdog:
    """Watches one running event loop; ``stalls`` counts the stalls seen."""

    def __init__(self, threshold: float = 0.1, interval: float = 0.02) -> None:
        self.threshold = threshold
        self.interval = interval
        self.stalls = 0
        self.longest = 0.0
        self._beat = time.monotonic()
        self._culprit = ""
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._handle = self._loop.call_later(self.interval, self._tick)
        threading.Thread(target=self._watch, name="loop watchdog", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()

    def _tick(self) -> None:
        now = time.monotonic()
        lag = now - self._beat - self.interval
        self._beat = now
        if lag > self.threshold:
            self.stalls += 1
            self.longest = max(self.longest, lag)
            logger.warning(
                "event loop blocked for %.0f ms%s", lag * 1000, self._culprit or " (culprit unseen)"
            )
        self._culprit = ""
        assert self._loop is not None
        self._handle = self._loop.call_later(self.interval, self._tick)

    def _watch(self) -> None:
        reported = 0.0
        while not self._stop.wait(self.interval):
            beat = self._beat
            late = time.monotonic() - beat - self.interval
            if late > self.threshold and beat != reported:
                reported = beat
                self._culprit = self._describe()
                logger.warning(
                    "event loop blocked for over %.0f ms%s", self.threshold * 1000, self._culprit
                )

    def _describe(self) -> str:
        """`` by task NAME at FILE:LINE in FUNCTION``: what the loop thread runs now."""
        task = asyncio.current_task(self._loop) if self._loop is not None else None
        frame = sys._current_frames().get(self._loop_thread)
        where = ""
        if frame is not None:
            code = frame.f_code
            where = f" at {code.co_filename}:{frame.f_lineno} in {code.co_name}"
        if task is None:
            # Between callbacks: the loop itself waited for the CPU or the GIL.
            return " with no task running (the process was short of CPU, or a thread held the GIL)"
        return f" by task {task.get_name()!r}{where}"


@asynccontextmanager
async def watch_loop(threshold: float) -> AsyncIterator[LoopWatchdog | None]:
    """A :class:`LoopWatchdog` on the running loop while inside; none when ``threshold`` is 0."""
    if threshold <= 0:
        yield None
        return
    watchdog = LoopWatchdog(threshold)
    watchdog.start()
    try:
        yield watchdog
    finally:
        watchdog.stop()
