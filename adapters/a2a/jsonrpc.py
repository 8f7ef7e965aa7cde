"""Malformed JSON-RPC on A2A, answered as the spec says and logged as what it is.

The A2A SDK parses a request body with ``json.loads`` and answers -32603
(internal error, logged at ERROR with a traceback) when that fails on a
4,300-digit integer, 1,000-deep nesting or bytes that are not UTF-8. Those
are the client's mistakes: :func:`parse` names the problem, which the
JSON-RPC front (:mod:`agenthost.adapters.a2a.rpc`) answers -32700 before
the SDK sees the body, and :class:`ClientMistakes` turns the SDK's
ERROR-with-traceback for a request it refuses (-32600, -32601, -32602) into
one INFO line.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson

DISPATCHER_LOGGER = "a2a.server.routes.jsonrpc_dispatcher"
_CLIENT_MISTAKES = (
    "Failed to validate base JSON-RPC request",
    "Failed to parse request params",
    "Unhandled method",
)
MAX_DEPTH = 200  # the SDK's json.loads runs out of stack well before 1,000
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


def parse(body: bytes) -> tuple[Any, str | None]:
    """The body's JSON value, or ``(None, problem)`` when it is not JSON the SDK could take."""
    try:
        # Fast; refuses nesting over 1,024 levels, but also valid ints over 64 bits.
        value = orjson.loads(body)
        if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
            return None, f"nested deeper than {MAX_DEPTH} levels"
        return value, None
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc).lower():
            return None, "nested too deeply"
    try:
        return json.loads(body.decode()), None
    except UnicodeDecodeError:
        return None, "the body is not UTF-8"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # JSONDecodeError, or an integer of over 4,300 digits
        return None, str(exc).split(";", 1)[0]


def _deeper_than(value: object, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False
