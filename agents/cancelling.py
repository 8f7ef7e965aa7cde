"""Stopping a task of one's own without swallowing a cancel meant for oneself.

``task.cancel()`` then ``with suppress(CancelledError): await task`` is the
usual way to stop a helper task, and it loses a cancel: if the task doing the
stopping is itself cancelled while it waits, the ``CancelledError`` it gets is
suppressed too, and it goes on as if nothing had asked it to stop.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait for it to end; a cancel of the caller still propagates."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
