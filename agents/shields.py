"""A section that cancelling the task cannot cut (saving a turn).

Two kinds of cancel reach a request's task while it saves a turn:

- an anyio cancel scope around it (a task group of an SDK):
  ``anyio.CancelScope(shield=True)`` holds those off. Opening and closing
  one costs ~5 µs (twice per ``/v1/responses`` request: ``Turn.save`` and
  the agent's session append; ~8 % of the request in session 15's
  profile), so :func:`save_shield` opens one only where an anyio scope
  holds the task (:func:`anyio_scope_holds`);
- a plain ``task.cancel()`` from agenthost's own disconnect watches
  (``adapters/disconnect.py``, ``adapters/sse.py``), which no anyio shield
  stops: they cancel through :func:`cancel`, which waits for the task's
  save section to end.

So a save that started finishes (a store that suspends mid-save, Redis, is
not left with half a turn) and the cancel lands right after it.

Why a private read: anyio has no public way to ask whether a scope holds
the current task (``current_effective_deadline()`` is ``inf`` with a scope
and without one). Its asyncio backend delivers a scope's cancel only to the
tasks the scope holds, and records each task's innermost scope in its task
table (``_task_states[task].cancel_scope``): set when the task enters a
scope or a task group starts it, put back to the outer one (``None`` past
the outermost) when the scope exits. A scope the section enters itself is
the store's own (an outer shield would not stop its cancel either), so a
task with no scope recorded when the section starts, uvicorn's bare request
task on ``/v1``, has nothing a shield could stop. anyio is capped below its
next minor release (``pyproject.toml``, ``tests/test_private_symbols.py``);
``tests/agents/test_shields.py`` checks the answer in every case that sets
or clears the record. If the table is gone, every section is shielded.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

import anyio

try:  # each task's innermost anyio scope, in anyio's asyncio backend
    from anyio._backends._asyncio import _task_states
except ImportError:  # another anyio layout: always shield
    _task_states = None  # type: ignore[assignment]

# Tasks inside a save section (how deep), and those whose cancel waits for its end.
_saving: dict[asyncio.Task[object], int] = {}
_deferred: set[asyncio.Task[object]] = set()


class save_shield:  # a class named as the function it replaces: ``with save_shield():``
    """A section that neither an anyio scope nor :func:`cancel` cuts short.

    A class rather than a generator context manager: it is entered twice per
    ``/v1/responses`` request, and a generator's frame and its ``contextlib``
    wrapper cost more than the section's own work where no scope holds the task.
    """

    __slots__ = ("_scope", "_task")
    _scope: anyio.CancelScope | None
    _task: asyncio.Task[object] | None

    def __enter__(self) -> None:
        self._task = task = asyncio.current_task()
        self._scope = None
        if task is None or anyio_scope_holds(task):  # not on asyncio (trio): anyio's way
            self._scope = anyio.CancelScope(shield=True)
            self._scope.__enter__()
        if task is not None:
            _saving[task] = _saving.get(task, 0) + 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        task = self._task
        try:
            if self._scope is not None:
                return self._scope.__exit__(kind, error, traceback)
            return None
        finally:
            if task is not None:
                depth = _saving.pop(task) - 1
                if depth:
                    _saving[task] = depth
                elif task in _deferred:
                    _deferred.discard(task)
                    task.cancel()


def anyio_scope_holds(task: asyncio.Task[object]) -> bool:
    """Whether an anyio cancel scope holds ``task`` (True when anyio cannot say)."""
    if _task_states is None:
        return True
    state = _task_states.get(task)
    return state is not None and state.cancel_scope is not None


def cancel(task: asyncio.Task[object]) -> None:
    """``task.cancel()``, or at the end of its save section if it is in one."""
    if task in _saving:
        _deferred.add(task)
    else:
        task.cancel()
