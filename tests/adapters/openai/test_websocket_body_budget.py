"""WebSocket messages count against the body-bytes-in-flight budgets HTTP bodies count
against: one budget (``Host.body_budget``), shared by both (issue 37).

A ``response.create`` holds its size from its receipt until it is parsed
(queued behind a running response included). Here one key's budget is
64 KiB: alice holds bytes with a stalled HTTP body or with messages queued
behind a response that waits, and bob is served all along.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest
from fastapi import FastAPI

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.app.guards import BodyBudget
from agenthost.app.server import create_app
from tests.principals import KEYS, keyed_settings
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio

KB = 1024
PER_KEY = 64 * KB
OWNER = {name: f"principal {name}" for name in ("alice", "bob")}


class WaitingModel(FunctionModel):
    """Answers once told to (another thread); says when it has started."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.go_on = threading.Event()
        super().__init__(self._wait, name="waiting")

    async def _wait(self, request: ModelRequest) -> str:
        self.started.set()
        await asyncio.to_thread(self.go_on.wait, 30)
        return "done waiting"


WAITING = WaitingModel()


def agents() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel()), "waiting": ChatAgent("waiting", WAITING)}


@pytest.fixture(scope="module")
def app() -> FastAPI:
    settings = keyed_settings(max_body_bytes=KB * KB, max_body_bytes_per_principal=PER_KEY)
    return create_app(settings, agents())


@pytest.fixture(scope="module")
def url(app: FastAPI) -> Iterator[str]:
    with serve_in_thread(app, lifespan=True) as base:
        yield base


def budget_of(app: FastAPI) -> BodyBudget:
    budget = app.state.host.body_budget
    assert isinstance(budget, BodyBudget)
    return budget


def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def client(url: str, name: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=KEYS[name], max_retries=0)


def headers(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}", "Content-Type": "application/json"}


def request_body(size: int) -> bytes:
    """A ``POST /v1/responses`` body of about ``size`` bytes."""
    return orjson.dumps({"model": "echo", "input": "x" * size})


def stalled_body(url: str, name: str, size: int) -> socket.socket:
    """A connection that sent ``size`` bytes of a ``POST /v1/responses`` body one byte
    short of what it declares: the server holds them until it closes."""
    port = int(url.rsplit(":", 1)[1])
    body = request_body(size)
    head = (
        f"POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {KEYS[name]}"
        f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.sendall(head.encode() + body[:-1])
    return sock


async def served(connection: Any, size: int) -> list[str]:
    """Send a ``response.create`` of ``size`` bytes of input; its events' types."""
    await connection.response.create(model="echo", input="y" * size)
    types = []
    async for event in connection:
        types.append(event.type)
        if event.type in ("response.completed", "response.failed", "error"):
            return types
    raise AssertionError("the connection closed mid-response")


async def test_a_message_past_the_key_budget_is_refused_while_another_key_is_served(
    app: FastAPI, url: str
) -> None:
    budget = budget_of(app)
    stalled = stalled_body(url, "alice", 16 * KB)  # alice holds 16 KiB of an HTTP body
    try:
        await asyncio.to_thread(until, lambda: budget.held[OWNER["alice"]] > 15 * KB, "held")
        async with client(url, "alice") as sdk, sdk.responses.connect() as alice:
            await alice.response.create(model="echo", input="y" * (80 * KB))
            refusal = await alice.recv()
            assert refusal.type == "error"
            assert refusal.status == 429
            assert refusal.error.code == "too_many_requests"
            assert f"more than {PER_KEY} bytes" in refusal.error.message
            # Bob holds nothing: his message as large is served (a body alone passes).
            async with client(url, "bob") as other, other.responses.connect() as bob:
                assert (await served(bob, 80 * KB))[-1] == "response.completed"
            # The refused message took nothing; the connection stays open and serves
            # alice's next message once her HTTP body is gone.
            assert set(budget.held) == {OWNER["alice"]}
            assert budget.held[OWNER["alice"]] < 17 * KB  # her HTTP body's bytes alone
            stalled.close()
            await asyncio.to_thread(until, lambda: not budget.held, "the body given back")
            assert (await served(alice, 80 * KB))[-1] == "response.completed"
    finally:
        stalled.close()
    assert budget.in_flight_bytes == 0 and not budget.held


async def test_queued_messages_hold_bytes_that_http_bodies_count_against(
    app: FastAPI, url: str
) -> None:
    budget = budget_of(app)
    WAITING.started.clear()
    WAITING.go_on.clear()
    async with client(url, "alice") as sdk, sdk.responses.connect() as alice:
        await alice.response.create(model="waiting", input="wait for it")
        assert (await alice.recv()).type == "response.created"
        assert await asyncio.to_thread(WAITING.started.wait, 20)
        # Queued behind the waiting response, this message holds its bytes unparsed.
        await alice.response.create(model="echo", input="z" * (50 * KB))
        await asyncio.to_thread(until, lambda: budget.held[OWNER["alice"]] > 50 * KB, "queued")
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            body = request_body(20 * KB)
            refused = await http.post(
                "/v1/responses",
                content=body,
                headers=headers("alice"),
            )
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "too_many_requests"
            assert refused.headers["retry-after"] == "1"
            assert budget.held[OWNER["alice"]] > 50 * KB  # her queued message still counts
            bob = await http.post(
                "/v1/responses",
                content=body,
                headers=headers("bob"),
            )
            assert bob.status_code == 200, bob.text
            # Another message of hers past the key's budget: refused, the queue kept.
            await alice.response.create(model="echo", input="w" * (20 * KB))
            WAITING.go_on.set()
            types = []
            async for event in alice:
                types.append((event.type, getattr(event, "status", None)))
                if (
                    event.type == "response.completed"
                    and len([t for t, _ in types if t == "response.completed"]) == 2
                ):
                    break
            assert ("error", 429) in types
            assert [t for t, _ in types].count("response.completed") == 2  # nothing lost
            await asyncio.to_thread(until, lambda: not budget.held, "parsed and given back")
            again = await http.post(
                "/v1/responses",
                content=body,
                headers=headers("alice"),
            )
            assert again.status_code == 200, again.text
    assert budget.in_flight_bytes == 0 and not budget.held


async def test_a_closed_connection_gives_back_what_its_queued_messages_hold(
    app: FastAPI, url: str
) -> None:
    budget = budget_of(app)
    WAITING.started.clear()
    WAITING.go_on.clear()
    async with client(url, "alice") as sdk, sdk.responses.connect() as alice:
        await alice.response.create(model="waiting", input="wait for it")
        assert (await alice.recv()).type == "response.created"
        assert await asyncio.to_thread(WAITING.started.wait, 20)
        await alice.response.create(model="echo", input="q" * (30 * KB))
        await asyncio.to_thread(until, lambda: budget.held[OWNER["alice"]] > 30 * KB, "queued")
    WAITING.go_on.set()
    await asyncio.to_thread(until, lambda: not budget.held, "a closed connection's bytes back")
    assert budget.in_flight_bytes == 0
