"""Cancel a request's work when its HTTP client goes away.

Streamed responses need nothing more: Starlette's ``StreamingResponse``
listens for the disconnect and cancels the stream, and with it the run. A
plain (non-streamed) handler is not cancelled by the server, so a run
behind it would go on calling models and tools for nobody;
:func:`unless_disconnected` watches the connection while it waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import anyio
from starlette.types import Receive

from agenthost.agents.errors import ClientGone

T = TypeVar("T")

# Watching costs a task and a wake-up of the server's connection (about as
# much CPU as the rest of a fast request), so it starts only once the work
# has taken this long: a client that leaves is noticed at most this late.
WATCH_AFTER = 0.1


async def unless_disconnected(receive: Receive, work: Awaitable[T]) -> T:
    """Await ``work``, cancelling it if the client disconnects first.

    Call it once the request body has been read: from then on the server's
    ``receive`` only returns ``http.disconnect``. Raises :class:`ClientGone`
    when the work was cancelled for that.
    """
    with anyio.CancelScope() as scope:
        watch = _Watch(receive, scope)
        try:
            return await work
        finally:
            watch.stop()
    raise ClientGone


class _Watch:
    """Starts watching after :data:`WATCH_AFTER`; cancels ``scope`` on a disconnect."""

    __slots__ = ("_receive", "_scope", "_task", "_timer")

    def __init__(self, receive: Receive, scope: anyio.CancelScope) -> None:
        self._receive, self._scope = receive, scope
        self._task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(WATCH_AFTER, self._start)

    def _start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self._scope.cancel()

    def stop(self) -> None:
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
