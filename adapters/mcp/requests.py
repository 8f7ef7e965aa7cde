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
from starlette.types import Message, Receive, Scope, Send


async def refuse_invalid(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """Answer -32600 and return None for a batch or a bad id; else a replaying receive."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return receive
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    problem = _problem(body)
    if problem is None:
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay
    error = {"code": -32600, "message": f"Invalid Request: {problem}"}
    payload = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
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
