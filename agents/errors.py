"""Errors of the agent runtime. Adapters map each to their protocol's shape."""

from __future__ import annotations


class AgentError(Exception):
    """Base class: a run failed for a reason the caller can be told."""


class ModelError(AgentError):
    """The chat model (or its upstream server) failed."""


class ModelBusy(ModelError):
    """The upstream is rate limiting us: worth retrying later, unlike other model errors."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, retried: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        # True when agenthost already spent its own retries: the client should not add more.
        self.retried = retried


class UserError(AgentError):
    """The request asks for something this agent cannot do (a 4xx, not a 5xx)."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class MaxStepsExceeded(AgentError):
    """The function-calling loop did not end within the agent's step limit."""


class ToolError(AgentError):
    """A tool failed; the message goes back to the model as the tool result."""


class FatalToolError(ToolError):
    """A tool failure that retrying cannot fix: the tool's retry policy never repeats it."""


class RunRefused(AgentError):
    """The agent declines the request (A2A ``rejected``); the message says why."""
