"""A step that blocks until cancelled, and what became of it: for cancellation tests."""

import threading
from typing import Any

import anyio
import anyio.to_thread


class Blocker:
    """``await blocker.block(...)`` waits a minute; the events say if it started and was cancelled.

    Thread events, so that a test can watch a server running in another thread.
    """

    def __init__(self) -> None:
        self.started, self.cancelled = threading.Event(), threading.Event()

    async def block(self, *_: Any) -> str:
        self.started.set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        return "late"

    async def cancel_once_started(self, run: Any, *args: Any) -> None:
        """Run ``run(*args)`` in a task, cancel it once the block started; wait for the cancel."""
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(run, *args)
                await anyio.to_thread.run_sync(self.started.wait, 5)
                group.cancel_scope.cancel()
        assert self.cancelled.is_set(), "the blocked step kept running after the cancel"
