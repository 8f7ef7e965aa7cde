"""Partial output of a run as throttled ``notifications/progress``.

A fast model streams a token every few milliseconds; one notification per
token would cost more than the run. Text is gathered and sent at most once
per ``interval`` (the last piece always goes out), each notification's
``message`` holding the text produced since the previous one. A
notification without a message goes out when the agent starts one of its
tools, so that a long tool call still shows the client the run is alive.
``progress`` counts characters and tool calls so far: it grows with every
notification, as the spec wants.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

Report = Callable[[float, str | None], Awaitable[None]]
"""``report(progress, message)``: sends one notification."""


class ThrottledProgress:
    """Gathers text deltas and reports them at most every ``interval`` seconds."""

    __slots__ = ("_buffer", "_interval", "_last", "_report", "_total")

    def __init__(self, report: Report, interval: float) -> None:
        self._report = report
        self._interval = interval
        self._buffer: list[str] = []
        self._total = 0
        self._last = float("-inf")

    async def text(self, delta: str) -> None:
        if not delta:
            return
        self._buffer.append(delta)
        self._total += len(delta)
        if time.monotonic() - self._last >= self._interval:
            await self.flush()

    async def tick(self) -> None:
        """Something happened that is not text (a tool started): say so now."""
        await self.flush()
        self._total += 1  # progress must grow with every notification
        await self._send(None)

    async def flush(self) -> None:
        """Send what is gathered, if anything (call it when the run ends)."""
        if self._buffer:
            text = "".join(self._buffer)
            self._buffer.clear()
            await self._send(text)

    async def _send(self, message: str | None) -> None:
        self._last = time.monotonic()
        await self._report(float(self._total), message)
