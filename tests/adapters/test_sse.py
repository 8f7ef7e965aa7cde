"""Keep-alive comments during a silence: on agenthost's own streams, and through the
KeepAlive layer on a stream another library writes (sse-starlette's, as the SDKs' are)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agenthost.adapters.sse import KEEPALIVE, KeepAlive, event_stream

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]
SILENCE = 1.2


async def _ours() -> AsyncIterator[bytes]:
    yield b"data: a\n\n"
    await asyncio.sleep(SILENCE)
    yield b"data: b\n\n"


async def _theirs() -> AsyncIterator[dict[str, Any]]:
    yield {"data": "a"}
    await asyncio.sleep(SILENCE)
    yield {"data": "b"}


async def ours(request: Request) -> Response:
    return event_stream(_ours(), {})


async def ours_with_its_own(request: Request) -> Response:
    return event_stream(_ours(), {}, keepalive=0)


async def theirs(request: Request) -> Response:
    return EventSourceResponse(_theirs(), ping=3600)


APP = Starlette(
    routes=[Route("/ours", ours), Route("/own", ours_with_its_own), Route("/theirs", theirs)]
)


async def _chunks(path: str, seconds: float) -> list[bytes]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(KeepAlive(APP, seconds), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.get_running_loop().create_task(server.serve([sock]))
    try:
        for _ in range(1000):  # uvicorn says it has started by a flag only
            if server.started:
                break
            await asyncio.sleep(0.01)
        async with (
            httpx.AsyncClient() as client,
            client.stream("GET", f"http://127.0.0.1:{port}{path}") as response,
        ):
            return [chunk async for chunk in response.aiter_raw()]
    finally:
        server.should_exit = True
        await serving


@pytest.mark.parametrize("path", ["/ours", "/theirs"])
async def test_a_silence_gets_keep_alives(anyio_backend: str, path: str) -> None:
    started = time.monotonic()
    chunks = await _chunks(path, 0.3)
    assert time.monotonic() - started >= SILENCE
    # One read may hold two writes (a keep-alive and the next event): the bytes are compared.
    body = b"".join(chunks)
    assert body.count(KEEPALIVE) >= 2, chunks
    assert body.startswith(b"data: a") and body.rstrip().endswith(b"data: b"), chunks


@pytest.mark.parametrize("path", ["/own", "/theirs"])
async def test_no_keep_alive_when_off(anyio_backend: str, path: str) -> None:
    # /own sets 0 itself (the layer's 0.3 s does not apply); /theirs under a layer of 0.
    chunks = await _chunks(path, 0.3 if path == "/own" else 0)
    assert KEEPALIVE not in chunks
