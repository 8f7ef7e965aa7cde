"""A slow first token through a real nginx: every streamed answer starts at once.

The upstream model (a real HTTP fake) sends nothing, not even its headers,
for :data:`FIRST_TOKEN` seconds; nginx's ``proxy_read_timeout`` is
:data:`READ_TIMEOUT`. Each protocol's stream must send its status and headers
when the run is accepted and keep-alive comments while the model is silent,
or nginx answers 504 before the first token. Every protocol and transport
runs at once, so the module costs one wait, not eight.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import openai
import pytest
from a2a.types import TaskState
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import RunCompletedEvent
from mcp import Client as MCPClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import sdk_client, user_message
from tests.nginx import nginx_proxy
from tests.upstream import free_port, serve_in_thread

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

FIRST_TOKEN = 35.0
"""Seconds the upstream model is silent before its first token (and its headers)."""
READ_TIMEOUT = 10.0
"""nginx's ``proxy_read_timeout``: well under the first token."""
KEEPALIVE = 2.0


async def _slow_chat(request: Request) -> Response:
    body = await request.json()
    await asyncio.sleep(FIRST_TOKEN)  # nothing at all until the first token
    text = f"late: {body['messages'][-1]['content']}"
    head = {"id": "chatcmpl-late", "created": 1, "model": body["model"]}
    if not body.get("stream"):  # a tool call of MCP runs the agent unstreamed
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return JSONResponse({**head, "object": "chat.completion", "choices": [choice]})

    async def chunks() -> AsyncIterator[bytes]:
        for delta, finish in (({"role": "assistant", "content": text}, None), ({}, "stop")):
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            data = {**head, "object": "chat.completion.chunk", "choices": [choice]}
            yield f"data: {json.dumps(data)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return StreamingResponse(chunks(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def proxied() -> Iterator[str]:
    """nginx's URL in front of agenthost, whose agent ``late`` calls the slow upstream."""
    upstream_app = Starlette(routes=[Route("/v1/chat/completions", _slow_chat, methods=["POST"])])
    with serve_in_thread(upstream_app) as upstream:
        model = OpenAIModel("late", base_url=f"{upstream}/v1", api_key="k", timeout=120)
        settings = Settings(
            adapters=["openai", "a2a", "mcp", "acp"],
            a2a_grpc_port=free_port(),
            stream_keepalive_seconds=KEEPALIVE,
        )
        app = create_app(settings, {"late": ChatAgent("late", model)})
        with (
            serve_in_thread(app, lifespan=True) as url,
            nginx_proxy({"agenthost": url}, read_timeout=READ_TIMEOUT) as urls,
        ):
            yield urls["agenthost"]


def _openai(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0, timeout=120)


async def _chat(url: str) -> str:
    async with _openai(url) as client:
        stream = await client.chat.completions.create(
            model="late", messages=[{"role": "user", "content": "chat"}], stream=True
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])


async def _responses(url: str) -> str:
    async with _openai(url) as client:
        stream = await client.responses.create(model="late", input="responses", stream=True)
        events: list[Any] = [event async for event in stream]
    assert events[-1].type == "response.completed", events[-1]
    return str(events[-1].response.output_text)


async def _a2a(url: str, transport: str) -> str:
    async with httpx.AsyncClient(timeout=120) as http:
        client = await sdk_client(f"{url}/a2a/late", transport, http=http)
        async with client:
            events = [event async for event in client.send_message(user_message(transport))]
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED, events
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    return "".join(p.text for c in chunks for p in c.artifact.parts)


async def _mcp(url: str, mode: str) -> str:
    client = MCPClient(f"{url}/mcp", mode=mode, read_timeout_seconds=120)  # type: ignore[arg-type]
    async with client:
        result = await client.call_tool("late", {"message": mode})
    assert not result.is_error, result
    assert result.structured_content is not None
    return str(result.structured_content["text"])


async def _acp(url: str) -> str:
    async with ACPClient(base_url=f"{url}/acp", timeout=120) as client:
        events = [event async for event in client.run_stream("acp", agent="late")]
    assert isinstance(events[-1], RunCompletedEvent), events[-1]
    return str(events[-1].run.output[0])


async def test_a_slow_first_token_arrives_whole_through_nginx_on_every_protocol(
    proxied: str,
) -> None:
    answers: dict[str, str] = {}
    failures: dict[str, BaseException] = {}
    calls = {
        "chat": _chat(proxied),
        "responses": _responses(proxied),
        "a2a JSON-RPC": _a2a(proxied, "JSONRPC"),
        "a2a HTTP+JSON": _a2a(proxied, "HTTP+JSON"),
        "mcp handshake era": _mcp(proxied, "legacy"),
        "mcp 2026-07-28": _mcp(proxied, "auto"),
        "acp": _acp(proxied),
    }

    async def ask(name: str) -> None:
        try:
            answers[name] = await calls[name]
        except Exception as exc:  # every protocol's outcome, not only the first failure
            failures[name] = exc

    start = time.monotonic()
    async with anyio.create_task_group() as group:
        for name in calls:
            group.start_soon(ask, name)
    assert not failures, {k: str(v) for k, v in failures.items()}
    assert answers == {
        "chat": "late: chat",
        "responses": "late: responses",
        "a2a JSON-RPC": "late: JSONRPC",
        "a2a HTTP+JSON": "late: HTTP+JSON",
        "mcp handshake era": "late: legacy",
        "mcp 2026-07-28": "late: auto",
        "acp": "late: acp",
    }
    assert time.monotonic() - start > FIRST_TOKEN  # the wait really was past nginx's limit
