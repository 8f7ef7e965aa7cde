"""Requests the MCP SDK would answer wrongly, refused as JSON-RPC says first.

A batch (an array; MCP has no batches since 2025-06-18) got -32602 and an
``id`` that is neither a string nor an integer (``{"a": 1}``) an empty 202:
both are invalid requests, -32600, before the SDK sees them. Any other body
is replayed to the SDK unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.types import Receive, Scope, Send

from agenthost.adapters.bodies import read_body, replaying, send_jsonrpc_error


async def refuse_invalid(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """Answer -32600 and return None for a batch or a bad id; else a replaying receive."""
    body = await read_body(receive)
    if body is None:
        return receive
    problem = _problem(body)
    if problem is None:
        return replaying(body, receive)
    await send_jsonrpc_error(send, 400, -32600, f"Invalid Request: {problem}")
    return None


def _problem(body: bytes) -> str | None:
    try:
        value: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return None  # unparsable: the SDK answers -32700
    if isinstance(value, list):
        return "batch requests are not supported"
    if isinstance(value, dict) and "id" in value:
        id_ = value["id"]
        if isinstance(id_, bool) or not isinstance(id_, str | int):
            return "the id must be a string or an integer"
    return None
