"""A run whose live stream is not read waits for it: A2A (JSON-RPC, HTTP+JSON) and IBM ACP.

One app under uvicorn on a real socket; the client sets a 4 KiB receive
buffer, sends a streamed request and stops reading. The model streams
numbered pieces of text and counts those it has given: once that count has
stopped moving, the run has not got to its end. Then the client reads the
stream to its end and gets every piece, in order. A client that leaves
instead lets an A2A task go on to its end (in the task store).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
import pytest

from agenthost.adapters.handoffs import HandOff
from agenthost.agents import ChatAgent, TextDelta
from agenthost.agents import Message as AgentMessage
from agenthost.agents.models import ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelResponse, ModelStreamEvent
from agenthost.agents.results import Usage
from agenthost.app.server import create_app
from tests.adapters.a2a.support import V1, a2a_settings, rpc
from tests.upstream import serve_in_thread

PIECES = 2000
SIZE = 4096  # 8 MiB in all: far more than the socket buffers hold


def piece(index: int) -> str:
    return f"<{index:05d}>".ljust(SIZE - 1, "x") + " "


TEXT = "".join(piece(i) for i in range(PIECES))


class CountingModel(BaseChatModel):
    """Streams :data:`PIECES` numbered pieces, a short nap before each; ``given`` counts them."""

    def __init__(self) -> None:
        self.name = "counting"
        self.given = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        for index in range(PIECES):
            await asyncio.sleep(0.001)
            self.given += 1
            yield TextDelta(piece(index))
        yield ModelResponse(AgentMessage.assistant(TEXT), Usage(requests=1))


NAMES = ("jsonrpc", "rest", "left", "acp")
MODELS = {name: CountingModel() for name in NAMES}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    agents = {name: ChatAgent(name, model) for name, model in MODELS.items()}
    settings = a2a_settings(adapters=["a2a", "acp"], max_output_chars=2 * len(TEXT))
    with serve_in_thread(create_app(settings, agents), lifespan=True) as base:
        yield base


@contextmanager
def unread(url: str, path: str, body: object) -> Iterator[http.client.HTTPResponse]:
    """A streamed request whose answer is not read past its head (4 KiB receive buffer)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(60)
    sock.connect((parts.hostname, parts.port))
    connection = http.client.HTTPConnection(parts.hostname, parts.port)
    connection.sock = sock
    try:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **V1}
        connection.request("POST", path, json.dumps(body), headers)
        response = connection.getresponse()
        assert response.status == 200
        yield response
    finally:
        connection.close()


def settled(model: CountingModel) -> int:
    """The model's count once it has not moved for a second (a minute at most)."""
    last, still, deadline = model.given, time.monotonic(), time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if model.given != last:
            last, still = model.given, time.monotonic()
        elif time.monotonic() - still >= 1 or last == PIECES:
            break
    return last


def events(response: http.client.HTTPResponse) -> list[dict[str, object]]:
    """The whole SSE stream's events (read now)."""
    body = response.read().decode().replace("\r\n", "\n")
    return [
        json.loads(line.removeprefix("data: "))
        for event in body.split("\n\n")
        for line in event.splitlines()
        if line.startswith("data: ")
    ]


def a2a_text(updates: list[dict[str, object]]) -> tuple[str, str]:
    """The artifact's text, in order, and the last status of an A2A stream."""
    text, state = [], ""
    for update in updates:
        artifact = update.get("artifactUpdate")
        if isinstance(artifact, dict):
            text += [part["text"] for part in artifact["artifact"]["parts"] if "text" in part]
        status = update.get("statusUpdate")
        if isinstance(status, dict):
            state = status["status"]["state"]
    return "".join(text), state


def a2a_message(text: str) -> dict[str, object]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}}


def test_an_unread_a2a_jsonrpc_stream_holds_its_run_until_it_is_read(url: str) -> None:
    body = rpc("SendStreamingMessage", a2a_message("go"))
    with unread(url, "/a2a/jsonrpc", body) as response:
        assert settled(MODELS["jsonrpc"]) < PIECES  # the run waits for its reader
        results = [event["result"] for event in events(response)]
    text, state = a2a_text(results)  # type: ignore[arg-type]
    assert text == TEXT
    assert state == "TASK_STATE_COMPLETED"
    assert MODELS["jsonrpc"].given == PIECES


def test_an_unread_a2a_rest_stream_holds_its_run_until_it_is_read(url: str) -> None:
    with unread(url, "/a2a/rest/message:stream", a2a_message("go")) as response:
        assert settled(MODELS["rest"]) < PIECES
        text, state = a2a_text(events(response))
    assert text == TEXT
    assert state == "TASK_STATE_COMPLETED"


def test_an_a2a_task_whose_stream_left_goes_on_to_its_end(url: str) -> None:
    body = rpc("SendStreamingMessage", a2a_message("go"))
    with unread(url, "/a2a/left", body) as response:
        assert settled(MODELS["left"]) < PIECES
        first = response.readline()  # the first event names the task
        while not first.startswith(b"data: "):
            first = response.readline()
        task = json.loads(first.removeprefix(b"data: "))["result"]["task"]["id"]
    # The client left; the task is not cancelled.
    assert settled(MODELS["left"]) == PIECES
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = httpx.post(f"{url}/a2a/left", json=rpc("GetTask", {"id": task}), headers=V1)
        found = got.json()["result"]
        if found["status"]["state"] == "TASK_STATE_COMPLETED":
            break
        time.sleep(0.2)
    assert found["status"]["state"] == "TASK_STATE_COMPLETED"
    stored = "".join(p["text"] for a in found["artifacts"] for p in a["parts"] if "text" in p)
    assert stored == TEXT


def test_an_unread_acp_stream_holds_its_run_until_it_is_read(url: str) -> None:
    message = {"role": "user", "parts": [{"content_type": "text/plain", "content": "go"}]}
    body = {"agent_name": "acp", "mode": "stream", "input": [message]}
    with unread(url, "/acp/runs", body) as response:
        assert settled(MODELS["acp"]) < PIECES
        got = events(response)
    parts = [e["part"]["content"] for e in got if e["type"] == "message.part"]  # type: ignore[index]
    assert "".join(parts) == TEXT  # type: ignore[arg-type]
    assert got[-1]["type"] == "run.completed"


@pytest.mark.anyio
async def test_a_hand_off_holds_its_run_while_its_reader_lags() -> None:
    hand_off = HandOff(max_bytes=10, max_items=3)
    hand_off.handed(6)
    await hand_off.room()  # room left: no wait
    hand_off.handed(6)
    waiting = asyncio.ensure_future(hand_off.room())
    await asyncio.sleep(0)
    assert not waiting.done()  # 12 bytes not taken
    hand_off.took()
    await waiting  # 6: room again
    hand_off.handed(1)
    hand_off.handed(1)
    waiting = asyncio.ensure_future(hand_off.room())
    await asyncio.sleep(0)
    assert not waiting.done()  # three items not taken
    hand_off.close()  # the reader left: the run goes on
    await waiting
    hand_off.handed(100)
    await hand_off.room()
