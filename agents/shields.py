"""A section that cancelling the task cannot cut (saving a turn).

Two kinds of cancel reach a request's task while it saves a turn:

- an anyio cancel scope around it (a task group of an SDK):
  ``anyio.CancelScope(shield=True)`` holds those off. :func:`save_shield`
  always opens one: anyio has no public way to tell whether a scope holds
  the task (asking its backend's private task table saved the ~5 µs a
  shield costs where none does, uvicorn's bare request task on ``/v1``);
- a plain ``task.cancel()`` from agenthost's own disconnect watches
  (``adapters/disconnect.py``, ``adapters/sse.py``), which no anyio shield
  stops: they cancel through :func:`cancel`, which waits for the task's
  save section to end.

So a save that started finishes (a store that suspends mid-save, Redis, is
not left with half a turn) and the cancel lands right after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

# Tasks inside a save section (how deep), and those whose cancel waits for its end.
_saving: dict[asyncio.Task[object], int] = {}
_deferred: set[asyncio.Task[object]] = set()


@contextmanager
def save_shield() -> Iterator[None]:
    """A section that neither an anyio scope nor :func:`cancel` cuts short."""
    task = asyncio.current_task()
    if task is None:  # not on asyncio (trio): anyio's own way
        with anyio.CancelScope(shield=True):
            yield
        return
    _saving[task] = _saving.get(task, 0) + 1
    try:
        with anyio.CancelScope(shield=True):
            yield
    finally:
        depth = _saving.pop(task) - 1
        if depth:
            _saving[task] = depth
        elif task in _deferred:
            _deferred.discard(task)
            task.cancel()


def cancel(task: asyncio.Task[object]) -> None:
    """``task.cancel()``, or at the end of its save section if it is in one."""
    if task in _saving:
        _deferred.add(task)
    else:
        task.cancel()
