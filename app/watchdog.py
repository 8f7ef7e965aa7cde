"""A loop-lag watchdog: a stall of the event loop over a threshold that our own code
caused is logged, naming the task (and the line) that held the loop; every stall
is counted, by cause, for ``/metrics``.

A heartbeat on the loop marks the time every ``interval``; a daemon thread
watches it. When the heartbeat is late by more than ``threshold`` the thread
notes the loop's current task and the frame it is running (read from another
thread, so it sees the culprit while it blocks); when the loop comes back the
heartbeat decides whose the stall was:

- ``blocked``, ours: the loop thread computed for most of it (a C call that
  holds the GIL, such as one huge integer power, also stops the watching
  thread: the loop thread's CPU time tells), or a task was seen holding the
  loop while the watching thread itself kept time (a blocking call: ``time.sleep``,
  synchronous I/O). Logged, with the culprit.
- ``starved``, not ours: the whole process was short of CPU (a busy machine, a
  CPU limit, a paused container), which nothing in the code can fix. Counted only
  (and logged at DEBUG): an idle server on a busy machine logged dozens of these.

A block that lasts over ``max(1 s, 10 * threshold)`` is also logged while it lasts,
so a loop that never comes back is named.

:class:`ShutdownWatchdog` bounds the shutdown itself: a thread (the loop may be the
thing that is stuck) that ends the process once the shutdown has overrun its time,
or at once on a second signal, with a log line that says why and where the loop was.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

logger = logging.getLogger("agenthost.watchdog")

CAUSES = ("blocked", "starved")


class LoopWatchdog:
    """Watches one running event loop; ``stalls`` counts the stalls seen, ``counts`` and
    ``seconds`` split them (and their lengths) by cause (:data:`CAUSES`)."""

    def __init__(self, threshold: float = 0.1, interval: float = 0.02) -> None:
        self.threshold = threshold
        self.interval = interval
        self.long_block = max(1.0, 10 * threshold)
        self.stalls = 0
        self.longest = 0.0
        self.counts = dict.fromkeys(CAUSES, 0)
        self.seconds = dict.fromkeys(CAUSES, 0.0)
        self._beat = time.monotonic()
        self._cpu = time.thread_time()
        self._culprit = ""  # the task the watching thread saw holding the loop, if any
        self._where = ""  # and the line the loop thread ran
        self._watcher_late = False  # the watching thread itself overslept in this beat
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._beat, self._cpu = time.monotonic(), time.thread_time()
        self._handle = self._loop.call_later(self.interval, self._tick)
        threading.Thread(target=self._watch, name="loop watchdog", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()

    def _tick(self) -> None:
        now, cpu = time.monotonic(), time.thread_time()
        lag = now - self._beat - self.interval
        computed = cpu - self._cpu
        self._beat, self._cpu = now, cpu
        if lag > self.threshold:
            self._stalled(lag, computed)
        self._culprit = self._where = ""
        self._watcher_late = False
        assert self._loop is not None
        self._handle = self._loop.call_later(self.interval, self._tick)

    def _stalled(self, lag: float, computed: float) -> None:
        # Ours if the loop thread was busy, or a task held the loop while the rest of
        # the process ran on time; otherwise the process itself was short of CPU.
        busy = computed >= lag / 2
        cause = "blocked" if busy or (self._culprit and not self._watcher_late) else "starved"
        self.stalls += 1
        self.counts[cause] += 1
        self.seconds[cause] += lag
        self.longest = max(self.longest, lag)
        if cause == "starved":
            logger.debug("event loop stalled %.0f ms: the process was short of CPU", lag * 1000)
            return
        if self._culprit:
            culprit = self._culprit + self._where
        elif self._where:
            culprit = f" by a callback{self._where}"
        else:  # the watching thread could not run: the loop thread held the GIL
            culprit = f" (culprit unseen: a C call holding the GIL for {computed * 1000:.0f} ms?)"
        logger.warning("event loop blocked for %.0f ms%s", lag * 1000, culprit)

    def _watch(self) -> None:
        seen = long = 0.0  # the beats whose stall was described, and logged while it lasts
        woke = time.monotonic()
        while not self._stop.wait(self.interval):
            now = time.monotonic()
            if now - woke - self.interval > self.threshold / 2:
                self._watcher_late = True  # this thread was kept waiting too: short of CPU
            woke = now
            beat = self._beat
            late = now - beat - self.interval
            if late <= self.threshold:
                continue
            if beat != seen:
                seen = beat
                self._culprit, self._where = self._describe()
            if late > self.long_block and beat != long and self._culprit:
                long = beat
                logger.warning(
                    "event loop blocked for over %.1f s%s%s (still blocked)",
                    late,
                    self._culprit,
                    self._where,
                )

    def _describe(self) -> tuple[str, str]:
        return describe(self._loop, self._loop_thread)


def describe(loop: asyncio.AbstractEventLoop | None, thread: int) -> tuple[str, str]:
    """What ``loop``'s thread runs now, seen from another thread: `` by task NAME``, or
    empty between tasks (a callback, or waiting for events: a heartbeat late only
    because the process was not given the CPU), and `` at FILE:LINE in FUNCTION``."""
    task = asyncio.current_task(loop) if loop is not None else None
    frame = sys._current_frames().get(thread)
    where = ""
    if frame is not None:
        code = frame.f_code
        where = f" at {code.co_filename}:{frame.f_lineno} in {code.co_name}"
    return (f" by task {task.get_name()!r}" if task is not None else ""), where


OVERRAN_EXIT = 1
"""The exit code when the shutdown overran its time (a second signal exits 128 + its number,
as if it had killed the process)."""
BACKSTOP_SECONDS = 2.0
"""After the deadline, SIGALRM (whose default action ends the process) ends it even if the
watchdog thread cannot run: a C call holding the GIL stops every Python thread."""
LOG_SECONDS = 1.0
"""At most this long for the last log line (its handler's lock may be held by the stuck thread)."""


class ShutdownWatchdog:
    """Ends the process ``seconds`` after :meth:`start` unless it has ended by then, or at
    once after :meth:`force` (a second signal), whatever the event loop is doing."""

    def __init__(self, seconds: float, budget: str) -> None:
        self.seconds = seconds
        self.budget = budget  # how ``seconds`` adds up, for the log line
        self._forced = threading.Event()
        self._signal = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._started = False

    def start(self) -> None:
        """From the loop's thread (a signal handler runs there): arm the thread and the backstop."""
        if self._started:
            return
        self._started = True
        try:  # a signal handler runs on the loop's thread, while the loop runs
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: nothing to name but the thread's frame
            self._loop = None
        self._loop_thread = threading.get_ident()
        logger.info(
            "the process ends at the latest %.1f s from now (%s)", self.seconds, self.budget
        )
        threading.Thread(target=self._watch, name="shutdown watchdog", daemon=True).start()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, self.seconds + BACKSTOP_SECONDS)

    def force(self, sig: int) -> None:
        """A second signal: exit now (from the watchdog's thread, which logs why)."""
        self._signal = sig
        self._forced.set()

    def _watch(self) -> None:
        if self._forced.wait(self.seconds):
            name = signal.Signals(self._signal).name
            self._exit(
                128 + self._signal, f"second {name}: exiting now, without finishing the shutdown"
            )
            return
        task, where = describe(self._loop, self._loop_thread)
        held = f"; the event loop is busy{task}{where}" if task or where else ""
        self._exit(
            OVERRAN_EXIT,
            f"shutdown still not done {self.seconds:.1f} s after the signal ({self.budget}): "
            f"exiting without finishing it{held}",
        )

    @staticmethod
    def _exit(code: int, message: str) -> None:
        def log() -> None:
            logger.error(message)
            for handler in logging.getLogger().handlers:
                handler.flush()

        logged = threading.Thread(target=log, name="last log line", daemon=True)
        logged.start()
        logged.join(LOG_SECONDS)
        os._exit(code)


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
