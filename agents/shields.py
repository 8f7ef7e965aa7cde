"""A section that cancelling the task cannot cut (saving a turn).

Two kinds of cancel reach a request's task while it saves a turn:

- an anyio cancel scope around it (a task group of an SDK, sse-starlette's):
  ``anyio.CancelScope(shield=True)`` holds those off. Entering and leaving
  one costs ~9 µs (paid twice per ``/v1/responses`` request, ~9 % of the
  server's samples), so :func:`save_shield` opens one only when an anyio
  scope holds the task;
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
from contextlib import AbstractContextManager, contextmanager, nullcontext

import anyio

try:  # where anyio's asyncio backend keeps each task's innermost scope
    from anyio._backends._asyncio import _task_states
except ImportError:  # another anyio layout: always shield
    _task_states = None  # type: ignore[assignment]

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
        with _anyio_shield(task):
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


def _anyio_shield(task: asyncio.Task[object]) -> AbstractContextManager[object]:
    if _task_states is not None:
        state = _task_states.get(task)
        if state is None or state.cancel_scope is None:
            return nullcontext()
    return anyio.CancelScope(shield=True)
