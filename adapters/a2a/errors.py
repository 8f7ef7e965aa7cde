"""A failed run as the A2A task's end: its state, and a message saying why.

A2A has no error object for a task that failed while it ran: the task ends
``failed`` (the agent could not do it), ``rejected`` (it will not, or cannot
with this request: the client's side) or ``canceled``, with an agent
message. The message's metadata carries the kind and whether retrying can
help, which the states alone cannot say (a busy upstream is worth a retry).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from a2a.types import TaskState
from a2a.utils.errors import A2AError

from agenthost.agents import AgentError, ErrorKind, kind_of
from agenthost.agents.errors import StoreUnavailable, details_of

logger = logging.getLogger("agenthost.a2a")

_FAILED, _REJECTED = TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED

ERRORS: Final[Mapping[ErrorKind, tuple[TaskState, str]]] = {
    ErrorKind.BUSY: (_FAILED, "the model is busy, try again later: {}"),
    ErrorKind.TIMEOUT: (_FAILED, "the run timed out: {}"),
    ErrorKind.REFUSED: (_REJECTED, "{}"),
    ErrorKind.LIMIT_EXCEEDED: (_FAILED, "the run went over a limit: {}"),
    ErrorKind.BAD_INPUT: (_REJECTED, "the agent cannot do this: {}"),
    ErrorKind.NOT_FOUND: (_REJECTED, "not found: {}"),
    ErrorKind.UPSTREAM: (_FAILED, "{}"),
    ErrorKind.CANCELLED: (TaskState.TASK_STATE_CANCELED, "the run was cancelled: {}"),
    ErrorKind.INTERRUPTED: (_FAILED, "the server is shutting down, try again: {}"),
    ErrorKind.INTERNAL: (_FAILED, "{}"),
    ErrorKind.UNAVAILABLE: (_FAILED, "a store the agent needs is unavailable, try again: {}"),
}
"""Each kind of failure as the state the task ends in and its message's text."""


def task_end(exc: Exception, agent: str) -> tuple[TaskState, str, dict[str, Any]]:
    """The state, message text and message metadata a task failing with ``exc`` ends with."""
    kind = kind_of(exc)
    state, text = ERRORS[kind]
    if isinstance(exc, AgentError):
        message = text.format(str(exc) or "run failed")
    else:
        # A bug, not a reason for the client: logged here, not sent.
        logger.exception("agent %r failed", agent)
        message = f"the agent {agent!r} failed unexpectedly (see the server log)"
    return state, message, details_of(exc)


class TaskStoreUnavailable(A2AError):
    """The shared task database cannot be reached: every A2A request that needs it gets this,
    on every transport, with no driver text (a JSON-RPC -32603, HTTP+JSON 503, whose data
    say ``{"kind": "unavailable", "retryable": true}``); nothing stored before is lost."""

    message = "the A2A task store is unavailable, try again shortly"

    def __init__(self) -> None:
        super().__init__(data=details_of(StoreUnavailable(self.message)))
