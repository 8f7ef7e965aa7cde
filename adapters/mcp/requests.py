"""Requests the MCP SDK would answer wrongly, refused as JSON-RPC says first.

A batch (an array; MCP has no batches since 2025-06-18) got -32602 and an
``id`` that is neither a string nor an integer (``{"a": 1}``) an empty 202:
both are invalid requests, -32600, before the SDK sees them, as is a body
past a JSON limit. Any other body is replayed to the SDK unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope, Send

from agenthost.adapters.bodies import read_body, replaying, send_jsonrpc_error
from agenthost.adapters.body_limits import BodyProblem, load_json_for_sdk, off_loop, refusal


@dataclass(frozen=True, slots=True)
class Checked:
    """A body that may go to the SDK: its replaying ``receive`` and its parsed message."""

    receive: Receive
    message: Any = None


async def refuse_invalid(scope: Scope, receive: Receive, send: Send) -> Checked | None:
    """Answer -32600 and return None for a batch, a bad id or a body past a JSON limit
    (-32700 for one too deep or not quite JSON); else the checked body.

    The SDK parses the body again (pydantic, on the loop): what reaches it is
    within the limits (:mod:`agenthost.adapters.body_limits`), and a large
    body was parsed here off the loop.
    """
    body = await read_body(receive)
    if body is None:
        return Checked(receive)
    try:
        value = await off_loop(len(body), load_json_for_sdk, body)
    except BodyProblem as refused:
        if refused.limit is None or refused.limit.endswith("DEPTH"):
            message = refused.message if refused.limit is None else refusal(refused)
            await send_jsonrpc_error(send, 400, -32700, f"Parse error: {message}")
        else:
            await send_jsonrpc_error(send, 400, -32600, f"Invalid Request: {refusal(refused)}")
        return None
    problem = _problem(value)
    if problem is None:
        return Checked(replaying(body, receive), value)
    await send_jsonrpc_error(send, 400, -32600, f"Invalid Request: {problem}")
    return None


def _problem(value: Any) -> str | None:
    if isinstance(value, list):
        return "batch requests are not supported"
    if isinstance(value, dict) and "id" in value:
        id_ = value["id"]
        if isinstance(id_, bool) or not isinstance(id_, str | int):
            return "the id must be a string or an integer"
    return None
