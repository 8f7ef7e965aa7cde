"""Many large requests on every store at once (issue 17, point 6), for the tests and the report.

Each request carries ``size`` bytes of text to be kept: a Responses
response (stored), a conversation, an A2A task (SendMessage), an IBM ACP run
in a session, an MCP tool call in a session. ``/proc/PID/status`` gives the
served process's RSS (``VmRSS``) and its peak (``VmHWM``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

MiB = 1024 * 1024


def rss(pid: int) -> tuple[int, int]:
    """``(VmRSS, VmHWM)`` of ``pid`` in bytes."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return tuple(int(fields[name].split()[0]) * 1024 for name in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def _requests(text: str) -> dict[str, Callable[[], tuple[str, dict[str, Any], dict[str, str]]]]:
    def responses() -> tuple[str, dict[str, Any], dict[str, str]]:
        return "/v1/responses", {"model": "echo", "input": text, "store": True}, {}

    def conversations() -> tuple[str, dict[str, Any], dict[str, str]]:
        item = {"type": "message", "role": "user", "content": text}
        return "/v1/conversations", {"items": [item]}, {}

    def a2a() -> tuple[str, dict[str, Any], dict[str, str]]:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        return "/a2a/echo", body, {"A2A-Version": "1.0"}

    def acp() -> tuple[str, dict[str, Any], dict[str, str]]:
        part = {"content": text, "content_type": "text/plain"}
        body = {
            "agent_name": "echo",
            "input": [{"role": "user", "parts": [part]}],
            "mode": "sync",
            "session_id": str(uuid.uuid4()),
        }
        return "/acp/runs", body, {}

    def mcp() -> tuple[str, dict[str, Any], dict[str, str]]:
        arguments = {"message": text, "session_id": uuid.uuid4().hex}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": arguments},
        }
        headers = {"Accept": "application/json, text/event-stream"}
        return "/mcp", body, {**headers, "MCP-Protocol-Version": "2025-06-18"}

    return {
        "responses": responses,
        "conversations": conversations,
        "a2a": a2a,
        "acp": acp,
        "mcp": mcp,
    }


async def flood(
    url: str, *, size: int, per_store: int, concurrency: int, only: str | None = None
) -> dict[str, Any]:
    """``per_store`` requests of ``size`` bytes on every store (or ``only`` one), ``concurrency``
    at a time each."""
    text = "x" * size
    statuses: dict[str, dict[int, int]] = {}

    async def one_store(
        name: str, make: Callable[[], tuple[str, dict[str, Any], dict[str, str]]]
    ) -> None:
        counts = statuses.setdefault(name, {})
        gate = asyncio.Semaphore(concurrency)

        async def send(client: httpx.AsyncClient) -> None:
            async with gate:
                path, body, headers = make()
                reply = await client.post(path, json=body, headers=headers)
                counts[reply.status_code] = counts.get(reply.status_code, 0) + 1

        async with httpx.AsyncClient(base_url=url, timeout=300) as client:
            await asyncio.gather(*(send(client) for _ in range(per_store)))

    stores = {n: make for n, make in _requests(text).items() if only in (None, n)}
    await asyncio.gather(*(one_store(name, make) for name, make in stores.items()))
    return statuses
