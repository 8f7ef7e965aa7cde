"""The drain ends each open event stream with its last chunk (app/streams.py):
never in the middle of a chunk the server is still writing, and nothing the app
sends after it goes out."""

from __future__ import annotations

import asyncio

import pytest
from starlette.types import Message, Receive, Scope, Send

from agenthost.app.streams import OpenStreams

pytestmark = pytest.mark.anyio

START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/event-stream")],
}


def chunk(data: bytes, more: bool = True) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def test_the_drain_waits_for_a_chunk_in_flight_then_ends_the_stream() -> None:
    sent: list[bytes | None] = []
    released = asyncio.Event()
    second_in_flight = asyncio.Event()
    app_done = asyncio.Event()

    async def server_send(message: Message) -> None:  # a client slow to read the 2nd chunk
        if message.get("body") == b"two":
            second_in_flight.set()
            await released.wait()
        sent.append(message.get("body"))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send(START)
        await send(chunk(b"one"))
        await send(chunk(b"two"))
        await send(chunk(b"three"))  # after the drain ended it: dropped
        await send(chunk(b"", more=False))
        app_done.set()

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    streams = OpenStreams(app)
    serving = asyncio.create_task(streams({"type": "http"}, receive, server_send))
    await second_in_flight.wait()
    assert len(streams) == 1
    ending = asyncio.create_task(streams.end_all())
    await asyncio.sleep(0.01)
    assert sent == [None, b"one"]  # the last chunk waits for "two" to be written
    released.set()
    assert await ending == 1
    await serving
    assert app_done.is_set()
    assert sent == [None, b"one", b"two", b""]
    assert len(streams) == 0


async def test_a_stream_that_ended_by_itself_is_not_ended_again() -> None:
    sent: list[Message] = []

    async def server_send(message: Message) -> None:
        sent.append(message)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send(START)
        await send(chunk(b"all", more=False))

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    streams = OpenStreams(app)
    await streams({"type": "http"}, receive, server_send)
    assert await streams.end_all() == 0
    assert [m.get("body") for m in sent] == [None, b"all"]


async def test_answers_that_are_no_event_stream_are_left_alone() -> None:
    sent: list[Message] = []
    go_on = asyncio.Event()

    async def server_send(message: Message) -> None:
        sent.append(message)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({**START, "headers": [(b"content-type", b"application/json")]})
        await go_on.wait()
        await send(chunk(b"{}", more=False))

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    streams = OpenStreams(app)
    serving = asyncio.create_task(streams({"type": "http"}, receive, server_send))
    await asyncio.sleep(0.01)
    assert await streams.end_all() == 0
    go_on.set()
    await serving
    assert [m.get("body") for m in sent] == [None, b"{}"]
