"""Requests the MCP SDK would answer wrongly, refused as JSON-RPC says first.

A batch (an array; MCP has no batches since 2025-06-18) got -32602 and an
``id`` that is neither a string nor an integer (``{"a": 1}``) an empty 202:
both are invalid requests, -32600, before the SDK sees them. Any other body
is replayed to the SDK unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import Receive, Scope, Send

from agenthost.adapters.bodies import read_body, replaying, send_jsonrpc_error


@dataclass(frozen=True, slots=True)
class Checked:
    """A body that may go to the SDK: its replaying ``receive`` and its parsed message."""

    receive: Receive
    message: Any = None


async def refuse_invalid(scope: Scope, receive: Receive, send: Send) -> Checked | None:
    """Answer -32600 and return None for a batch or a bad id; else the checked body."""
    body = await read_body(receive)
    if body is None:
        return Checked(receive)
    value = _parsed(body)
    problem = _problem(value)
    if problem is None:
        return Checked(replaying(body, receive), value)
    await send_jsonrpc_error(send, 400, -32600, f"Invalid Request: {problem}")
    return None


def _parsed(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            return None  # unparsable: the SDK answers -32700


def _problem(value: Any) -> str | None:
    if isinstance(value, list):
        return "batch requests are not supported"
    if isinstance(value, dict) and "id" in value:
        id_ = value["id"]
        if isinstance(id_, bool) or not isinstance(id_, str | int):
            return "the id must be a string or an integer"
    return None
