"""Malformed JSON-RPC on A2A, answered as the spec says and logged as what it is.

The A2A SDK parses a request body with ``json.loads`` and answers -32603
(internal error, logged at ERROR with a traceback) when that fails on a
4,300-digit integer, 1,000-deep nesting or bytes that are not UTF-8. Those
are the client's mistakes: :func:`parse` names the problem, which the
JSON-RPC front (:mod:`agenthost.adapters.a2a.rpc`) answers -32700 before
the SDK sees the body, and :class:`ClientMistakes` turns the SDK's
ERROR-with-traceback for a request it refuses (-32600, -32601, -32602) into
one INFO line. Bodies are bounded as every protocol's are
(:mod:`agenthost.adapters.body_limits`): nesting over
``AGENTHOST_MAX_JSON_DEPTH`` is -32700 too (the SDK's ``json.loads`` runs
out of stack well before 1,000 levels).
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.types import Send

from agenthost.adapters.bodies import send_jsonrpc_error
from agenthost.adapters.body_limits import BodyProblem, load_json, refusal

DISPATCHER_LOGGER = "a2a.server.routes.jsonrpc_dispatcher"
_CLIENT_MISTAKES = (
    "Failed to validate base JSON-RPC request",
    "Failed to parse request params",
    "Unhandled method",
)
_CLIENT_CODES = ("Code=-32700", "Code=-32600", "Code=-32601", "Code=-32602")


class ClientMistakes(logging.Filter):
    """One INFO line, no traceback, for a request the client got wrong."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        text = record.getMessage() if message.startswith("Request Error") else message
        if message.startswith(_CLIENT_MISTAKES) or any(code in text for code in _CLIENT_CODES):
            record.levelno, record.levelname = logging.INFO, "INFO"
            if record.exc_info and record.exc_info[1] is not None:
                record.msg = f"{message}: {record.exc_info[1]}"
                record.args = ()
            record.exc_info = record.exc_text = None
        return True


def install_log_filter() -> None:
    logger = logging.getLogger(DISPATCHER_LOGGER)
    if not any(isinstance(f, ClientMistakes) for f in logger.filters):
        logger.addFilter(ClientMistakes())


def parse(body: bytes) -> Any:
    """The body's JSON value; :class:`BodyProblem` when it is not JSON the SDK could take
    or passes a limit (:func:`agenthost.adapters.body_limits.load_json`). Blocking."""
    return load_json(body)


async def refuse(send: Send, problem: BodyProblem) -> None:
    """A body that is not JSON, or too deep, is a parse error (-32700, as the SDK answers);
    one past another limit an invalid request (-32600, a 400), naming the limit."""
    if problem.limit is None:
        await send_jsonrpc_error(send, 200, -32700, f"Parse error: {problem.message}")
    elif problem.limit.endswith("DEPTH"):
        await send_jsonrpc_error(send, 200, -32700, f"Parse error: {refusal(problem)}")
    else:
        await send_jsonrpc_error(send, 400, -32600, f"Invalid Request: {refusal(problem)}")
