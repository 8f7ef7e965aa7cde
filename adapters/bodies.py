"""A request body read whole before the protocol's SDK sees it, then replayed.

Some malformed bodies must be refused in the protocol's own shape before an
SDK answers them wrongly (a 500, a traceback, an empty 202). The guard reads
the body once (:func:`read_body`), checks it, and hands the SDK a
``receive`` that replays it (:func:`replaying`), or answers a JSON-RPC error
itself (:func:`send_jsonrpc_error`).
"""

from __future__ import annotations

import orjson
from starlette.types import Message, Receive, Send


async def read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None if the client disconnected first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then whatever the connection sends next."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def send_jsonrpc_error(send: Send, status: int, code: int, message: str) -> None:
    """A JSON-RPC error response without an id (the request's could not be read)."""
    error = {"code": code, "message": message}
    payload = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
