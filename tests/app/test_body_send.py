"""A started event stream sends its chunks past the app's layers that only act on the
start (adapters/sse.py: ``passes_bodies``, ``body_send``), and through any that does not
say so; the real layers (request id, body limit) still do their part on the start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.adapters.sse import EventStream, body_send, passes_bodies
from agenthost.app.guards import BodyLimitGuard
from agenthost.app.logs import RequestContext

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]
EVENTS = [f"data: {i}\n\n".encode() for i in range(5)]


async def _events() -> AsyncIterator[bytes]:
    for event in EVENTS:
        yield event


async def stream(scope: Scope, receive: Receive, send: Send) -> None:
    await EventStream(_events(), keepalive=0)(scope, receive, send)


class Seen:
    """A layer that writes down the type of every message it passes on; ``declared``:
    it says it passes bodies through (it only counts them here, to show they skip it)."""

    def __init__(self, app: ASGIApp, declared: bool) -> None:
        self.app, self.declared = app, declared
        self.messages: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def seen(message: Message) -> None:
            self.messages.append(message["type"])
            await send(message)

        if self.declared:
            passes_bodies(scope, seen, send)
        await self.app(scope, receive, seen)


async def _call(app: ASGIApp) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/v1/x", "headers": []}
    await app(scope, receive, send)
    return sent


def _guarded(app: ASGIApp) -> BodyLimitGuard:
    def error_for(path: str, status: int, message: str, code: str) -> Any:
        raise AssertionError("no error expected")

    return BodyLimitGuard(app, max_bytes=1000, error_for=error_for)


async def test_chunks_skip_the_layers_that_pass_bodies(anyio_backend: str) -> None:
    inner = Seen(_guarded(stream), declared=True)
    outer = Seen(RequestContext(inner, {"/v1": "openai"}), declared=True)
    sent = await _call(outer)
    assert [m.get("body") for m in sent[1:]] == [*EVENTS, b""]
    assert sent[-1]["more_body"] is False
    start = sent[0]
    assert start["type"] == "http.response.start"
    assert any(name == b"x-request-id" for name, _ in start["headers"])  # RequestContext's
    assert outer.messages == inner.messages == ["http.response.start"]


async def test_a_layer_that_does_not_say_so_gets_every_chunk(anyio_backend: str) -> None:
    inner = Seen(_guarded(stream), declared=True)
    middle = Seen(inner, declared=False)
    outer = Seen(RequestContext(middle, {"/v1": "openai"}), declared=True)
    sent = await _call(outer)
    assert [m.get("body") for m in sent[1:]] == [*EVENTS, b""]
    every = ["http.response.start", *["http.response.body"] * (len(EVENTS) + 1)]
    assert middle.messages == outer.messages == every  # past middle: through outer too
    assert inner.messages == ["http.response.start"]


async def test_a_layer_passes_bodies_only_when_it_says(anyio_backend: str) -> None:
    async def raw(message: Message) -> None: ...

    async def wrapped(message: Message) -> None: ...

    passing = False
    scope: dict[str, Any] = {}
    passes_bodies(scope, wrapped, raw, lambda: passing)
    assert body_send(scope, wrapped) is wrapped
    passing = True
    assert body_send(scope, wrapped) is raw
    assert body_send({}, wrapped) is wrapped
