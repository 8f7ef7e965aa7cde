"""Posting to ``/orchestrate/{agent}/chat/completions`` as watsonx Orchestrate does."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.adapters.orchestrate.spec import (
    ChatCompletion,
    ThreadMessageDelta,
    ThreadRunStepDelta,
    parse_stream,
)
from tests.principals import KEYS


def api_key(principal: str) -> dict[str, str]:
    """Orchestrate's ``API_KEY`` auth scheme: the key in ``X-API-Key``."""
    return {"X-API-Key": KEYS[principal]}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def handoff(agent: str) -> list[dict[str, Any]]:
    """The pair a supervisor appends when it routes to ``agent``: its call and the result."""
    id = f"call-{uuid.uuid4().hex[:8]}"
    call = {
        "id": id,
        "type": "function",
        "function": {"name": f"transfer_to_{agent}", "arguments": "{}"},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": id, "content": f"Transferred to {agent}."},
    ]


async def stream(
    client: httpx.AsyncClient,
    agent: str,
    messages: list[dict[str, Any]],
    *,
    thread: str | None = None,
    headers: dict[str, str] | None = None,
) -> list[ThreadMessageDelta | ThreadRunStepDelta]:
    """One streamed turn; every event validated against the spec's models."""
    sent = {**(headers or {}), **({"X-IBM-THREAD-ID": thread} if thread else {})}
    body = {"model": agent, "messages": messages, "stream": True}
    response = await client.post(f"/orchestrate/{agent}/chat/completions", json=body, headers=sent)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_stream(response.content)


async def complete(
    client: httpx.AsyncClient,
    agent: str,
    messages: list[dict[str, Any]],
    *,
    thread: str | None = None,
    headers: dict[str, str] | None = None,
) -> ChatCompletion:
    """One non-streamed turn, the thread in ``extra_body`` (the header's alternative)."""
    body: dict[str, Any] = {"model": agent, "messages": messages}
    if thread:
        body["extra_body"] = {"thread_id": thread}
    response = await client.post(
        f"/orchestrate/{agent}/chat/completions", json=body, headers=headers
    )
    assert response.status_code == 200, response.text
    return ChatCompletion.model_validate_json(response.content)
