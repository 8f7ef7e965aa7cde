"""A section that an anyio cancel scope around the caller cannot cut (saving a turn).

``anyio.CancelScope(shield=True)`` keeps every enclosing anyio scope from
cancelling the task while it is open (a plain ``task.cancel()`` still goes
through: anyio shields only its own scopes' cancellation). Entering and
leaving one costs ~9 µs here, paid twice per ``/v1/responses`` request
(py-spy: ~9 % of the server's samples). A task that no anyio scope holds
(uvicorn's request task on the ``/v1`` fast lane) has nothing such a
shield could stop, so :func:`save_shield` opens one only when a scope
holds the task: the same guarantee, at a dictionary lookup when there is
nothing to shield from.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager, nullcontext

import anyio

try:  # where anyio's asyncio backend keeps each task's innermost scope
    from anyio._backends._asyncio import _task_states
except ImportError:  # another anyio layout: always shield
    _task_states = None  # type: ignore[assignment]


def save_shield() -> AbstractContextManager[object]:
    """A shielded cancel scope, or nothing when no anyio scope holds the current task."""
    if _task_states is not None:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not on asyncio (trio): anyio's own way
            task = None
        if task is not None:
            state = _task_states.get(task)
            if state is None or state.cancel_scope is None:
                return nullcontext()
    return anyio.CancelScope(shield=True)
