"""A failed run as a tool result with ``isError``: the text says what kind of failure.

MCP wants a tool's own failures in its result (the calling model reads them
and may try another way), and protocol errors only for a call that cannot
be made (unknown tool, bad arguments: :mod:`adapters.mcp.convert`). The
result's ``_meta`` carries the kind and whether retrying can help.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import mcp_types as types

from agenthost.agents import AgentError, ErrorKind, kind_of
from agenthost.agents.errors import details_of

META_KEY = "agenthost/error"
"""The ``_meta`` entry of an error result: ``{kind, retryable, retryAfter?}``."""

ERRORS: Final[Mapping[ErrorKind, str]] = {
    ErrorKind.BUSY: "the agent's model is busy{after}, try again later: {message}",
    ErrorKind.TIMEOUT: "the run timed out: {message}",
    ErrorKind.REFUSED: "the agent refused: {message}",
    ErrorKind.LIMIT_EXCEEDED: "the run went over a limit: {message}",
    ErrorKind.BAD_INPUT: "the agent cannot do this: {message}",
    ErrorKind.NOT_FOUND: "not found: {message}",
    ErrorKind.UPSTREAM: "the agent's model failed: {message}",
    ErrorKind.CANCELLED: "the run was cancelled: {message}",
    ErrorKind.INTERRUPTED: "the server is shutting down, try again: {message}",
    ErrorKind.INTERNAL: "the agent failed: {message}",
    ErrorKind.UNAVAILABLE: "a store is unavailable, try again: {message}",
}
"""Each kind of failure as the text of the error result."""


def error_result(exc: Exception) -> types.CallToolResult:
    """``exc`` as an ``isError`` result; a bug (no AgentError) is named by its type only."""
    kind = kind_of(exc)
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, AgentError):
        after = f" (retry after {retry_after:g} s)" if retry_after else ""
        text = ERRORS[kind].format(message=exc, after=after)
    else:
        text = f"the agent failed with an internal error ({type(exc).__name__})"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        is_error=True,
        _meta={META_KEY: details_of(exc)},
    )
