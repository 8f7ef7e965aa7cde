"""Errors of the agent runtime, each with a kind that adapters map to their wire shape.

The whole tree (kind, and whether retrying can help, in brackets)::

    AgentError                  [internal]       a run failed for a reason the caller can be told
    ├── ModelError              [upstream]       the chat model (or its server) failed
    │   └── ModelBusy           [busy, retry]    the upstream rate limits us (``retry_after``)
    ├── UserError               [bad_input]      the request asks what this agent cannot do
    │   └── NotFound            [not_found]      the request names something that does not exist
    ├── MaxStepsExceeded        [internal]       the function-calling loop did not end in time
    ├── ToolError               [upstream]       a tool failed (its message goes to the model)
    │   └── FatalToolError      [upstream]       ... and retrying the tool cannot fix it
    ├── RunRefused              [refused]        the agent declines the request
    ├── RunLimitExceeded        [limit|timeout]  the run went over its output size or duration
    ├── RunInterrupted          [interrupted, retry]  the server is shutting down
    ├── StoreUnavailable        [unavailable, retry]  a shared store (Redis) is unreachable
    ├── RunIncomplete           [internal]       the run's updates ended without its result
    └── RunCancelled            [cancelled]      the run was cancelled before its answer
        └── ClientGone          [cancelled]      ... because its HTTP client went away

Every class has a :class:`ErrorKind` and ``retryable`` as class attributes;
an instance may override them where the instance knows better
(``ModelBusy`` once agenthost spent its own retries, ``RunLimitExceeded``
for a time-out). An exception that is no ``AgentError`` is a bug: its kind
is :attr:`ErrorKind.INTERNAL` (:func:`kind_of`), and its message is not
the client's to read.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    """What went wrong, as far as a client can act on it: each adapter has one table of these."""

    BUSY = "busy"
    """The upstream model is rate limiting: try again later."""
    TIMEOUT = "timeout"
    """The run took longer than it may."""
    REFUSED = "refused"
    """The agent declines the request."""
    LIMIT_EXCEEDED = "limit_exceeded"
    """The run went over a bound other than time (its output size)."""
    BAD_INPUT = "bad_input"
    """The request is wrong for this agent: the client must change it."""
    NOT_FOUND = "not_found"
    """The request names something (an agent, a session, a run) that does not exist."""
    UPSTREAM = "upstream"
    """A model or tool the agent depends on failed."""
    CANCELLED = "cancelled"
    """The run was cancelled (by its client, or the client left)."""
    INTERRUPTED = "interrupted"
    """The server stopped the run (it is shutting down): another replica can take it."""
    INTERNAL = "internal"
    """The agent or agenthost failed: nothing the client can do."""
    UNAVAILABLE = "unavailable"
    """A shared store (Redis, PostgreSQL) cannot be reached: try again shortly."""


class AgentError(Exception):
    """Base class: a run failed for a reason the caller can be told."""

    kind: ErrorKind = ErrorKind.INTERNAL
    retryable: bool = False


class ModelError(AgentError):
    """The chat model (or its upstream server) failed."""

    kind = ErrorKind.UPSTREAM


class ModelBusy(ModelError):
    """The upstream is rate limiting us: worth retrying later, unlike other model errors."""

    kind = ErrorKind.BUSY
    retryable = True

    def __init__(
        self, message: str, *, retry_after: float | None = None, retried: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        # True when agenthost already spent its own retries: the client should not add more.
        self.retried = retried
        self.retryable = not retried


class UserError(AgentError):
    """The request asks for something this agent cannot do (a 4xx, not a 5xx)."""

    kind = ErrorKind.BAD_INPUT

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class NotFound(UserError):
    """The request names something that does not exist (an agent, a session, a run)."""

    kind = ErrorKind.NOT_FOUND


class MaxStepsExceeded(AgentError):
    """The function-calling loop did not end within the agent's step limit.

    The agent's own configuration, not the request's fault: an internal failure.
    """


class ToolError(AgentError):
    """A tool failed; the message goes back to the model as the tool result."""

    kind = ErrorKind.UPSTREAM


class FatalToolError(ToolError):
    """A tool failure that retrying cannot fix: the tool's retry policy never repeats it."""


class RunRefused(AgentError):
    """The agent declines the request (A2A ``rejected``); the message says why."""

    kind = ErrorKind.REFUSED


class RunLimitExceeded(AgentError):
    """A run went over its output size or duration (``code == "run_timeout"``); it was stopped."""

    kind = ErrorKind.LIMIT_EXCEEDED

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code
        if code == "run_timeout":
            self.kind = ErrorKind.TIMEOUT


class RunInterrupted(AgentError):
    """The server stopped the run (it is shutting down); another replica can take it."""

    kind = ErrorKind.INTERRUPTED
    retryable = True


class StoreUnavailable(AgentError):
    """A shared store (Redis, PostgreSQL) cannot be reached or refuses a write; retry later.

    Nothing stored before is lost: the request can be repeated once the store is back.
    """

    kind = ErrorKind.UNAVAILABLE
    retryable = True


class RunIncomplete(AgentError):
    """A run's updates ended without their :class:`RunFinished` result (a broken agent)."""


class RunCancelled(AgentError):
    """The run was cancelled before it had its answer."""

    kind = ErrorKind.CANCELLED


class ClientGone(RunCancelled):
    """The client disconnected before the answer was ready; the work was cancelled."""

    def __init__(self, message: str = "the client closed the request") -> None:
        super().__init__(message)


def kind_of(exc: BaseException) -> ErrorKind:
    """``exc``'s kind; any exception that is no :class:`AgentError` is internal (a bug)."""
    return exc.kind if isinstance(exc, AgentError) else ErrorKind.INTERNAL


def retryable_of(exc: BaseException) -> bool:
    """Whether trying the same request again may succeed."""
    return isinstance(exc, AgentError) and exc.retryable


def details_of(exc: BaseException) -> dict[str, Any]:
    """What a protocol's free-form error data says of ``exc``, the same everywhere:
    ``{"kind", "retryable", "retryAfter"?}``."""
    details: dict[str, Any] = {"kind": kind_of(exc).value, "retryable": retryable_of(exc)}
    if (retry_after := getattr(exc, "retry_after", None)) is not None:
        details["retryAfter"] = retry_after
    return details


def message_of(exc: BaseException) -> str:
    """The text a client may read: an AgentError's own; a bug names only its type."""
    return str(exc) if isinstance(exc, AgentError) else f"internal error: {type(exc).__name__}"
