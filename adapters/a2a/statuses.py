"""HTTP+JSON errors with the A2A 1.0 spec's status codes and media type.

The SDK maps two errors to a 400 where the spec's table (section 11,
"Error Handling" of the HTTP+JSON binding) says otherwise: a task that can
no longer be cancelled is 409 Conflict, a part type the agent does not take
is 415 Unsupported Media Type. And its error bodies are ``application/json``
while its answers are ``application/a2a+json``. :class:`SpecErrors` fixes
both on the agent's HTTP+JSON routes (the JSON-RPC endpoint answers errors
inside a 200, as JSON-RPC does). Error bodies are small (a message and an
``ErrorInfo``), so one is read whole to be rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

A2A_JSON: Final = "application/a2a+json"

SPEC_STATUS: Final[Mapping[str, int]] = {
    "TASK_NOT_CANCELABLE": 409,
    "CONTENT_TYPE_NOT_SUPPORTED": 415,
}
"""``ErrorInfo.reason`` → the HTTP status the spec gives it, where the SDK's differs."""
UNAVAILABLE: Final = 503
"""An error whose ``ErrorInfo`` metadata says ``kind: unavailable`` (the task database is
down, :class:`~agenthost.adapters.a2a.errors.TaskStoreUnavailable`): the SDK knows no such
error and would answer 500."""


def spec_status(body: dict[str, Any], status: int) -> int:
    """The status an error body should be sent with."""
    details = body.get("error", {}).get("details") or []
    for detail in details:
        if isinstance(detail, dict) and detail.get("reason") in SPEC_STATUS:
            return SPEC_STATUS[detail["reason"]]
        metadata = detail.get("metadata") if isinstance(detail, dict) else None
        if isinstance(metadata, dict) and metadata.get("kind") == "unavailable":
            return UNAVAILABLE
    return status


class SpecErrors:
    """Rewrites the HTTP+JSON routes' error responses (status, ``code``, media type)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        relative = scope["path"][len(scope.get("root_path", "")) :]
        if scope["type"] != "http" or relative in ("", "/"):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send_error(start, b"".join(chunks), send)

        await self.app(scope, receive, rewrite)

    async def _send_error(self, start: Message, body: bytes, send: Send) -> None:
        headers = MutableHeaders(raw=list(start["headers"]))
        status = start["status"]
        if headers.get("content-type", "").startswith("application/json"):
            try:
                payload = orjson.loads(body)
            except orjson.JSONDecodeError:
                payload = None
            if isinstance(payload, dict):
                status = spec_status(payload, status)
                if isinstance(payload.get("error"), dict) and status != start["status"]:
                    payload["error"]["code"] = status
                    body = orjson.dumps(payload)
            headers["content-type"] = A2A_JSON
            headers["content-length"] = str(len(body))
        await send({**start, "status": status, "headers": headers.raw})
        await send({"type": "http.response.body", "body": body})
