"""A failed run as Zed ACP says it: a turn's stop reason, or a JSON-RPC error.

Where the protocol has a stop reason for it (the agent refused, went over a
limit, was cancelled), the prompt ends normally with that reason and the
error's text as the agent's last words; any other failure is the prompt's
JSON-RPC error, whose ``data`` carries the message, the kind and whether
retrying can help.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from acp import RequestError
from acp.schema import StopReason

from agenthost.agents import ErrorKind, kind_of
from agenthost.agents.errors import details_of, message_of

INVALID_PARAMS, RESOURCE_NOT_FOUND, INTERNAL_ERROR = -32602, -32002, -32603

ERRORS: Final[Mapping[ErrorKind, StopReason | int]] = {
    ErrorKind.BUSY: INTERNAL_ERROR,
    ErrorKind.TIMEOUT: INTERNAL_ERROR,
    ErrorKind.REFUSED: "refusal",
    ErrorKind.LIMIT_EXCEEDED: "max_tokens",
    ErrorKind.BAD_INPUT: INVALID_PARAMS,
    ErrorKind.NOT_FOUND: RESOURCE_NOT_FOUND,
    ErrorKind.UPSTREAM: INTERNAL_ERROR,
    ErrorKind.CANCELLED: "cancelled",
    ErrorKind.INTERRUPTED: INTERNAL_ERROR,
    ErrorKind.INTERNAL: INTERNAL_ERROR,
    ErrorKind.UNAVAILABLE: INTERNAL_ERROR,
}
"""Each kind of failure as the turn's stop reason, or the code of the prompt's error."""

_MESSAGES = {INVALID_PARAMS: "Invalid params", RESOURCE_NOT_FOUND: "Resource not found"}


def to_outcome(exc: Exception) -> StopReason | RequestError:
    """How a prompt whose run failed with ``exc`` ends."""
    wire = ERRORS[kind_of(exc)]
    if isinstance(wire, str):
        return wire
    data = {"message": message_of(exc), **details_of(exc)}
    return RequestError(wire, _MESSAGES.get(wire, "Internal error"), data)
