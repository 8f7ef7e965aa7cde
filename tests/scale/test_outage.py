"""Redis going away and coming back while agenthost serves.

Requests that need the store get their protocol's "unavailable" error
quickly; stateless ones go on; /readyz names the store; once Redis is back
everything works again with nothing stored before lost, without a restart.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.conftest import running
from tests.scale.replica_agents import recall
from tests.stores import RedisServer, postgres, postgres_server
from tests.upstream import free_port

pytestmark = pytest.mark.anyio

AGENTS = {"recall": recall, "echo": ChatAgent("echo", EchoModel())}
V1 = {"A2A-Version": "1.0"}
MCP = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


# Each of the eight protocols' stores closes its Redis connections at shutdown after the
# outage; under CI's load that once took past asgi-lifespan's default 5 s (session 11):
# shutdown time is the drain tests' subject, not these.
SHUTDOWN = 30.0


def settings(url: str, **overrides: object) -> Settings:
    return Settings(
        adapters=["openai", "a2a", "mcp", "acp"],
        session_store=url,
        store_timeout=0.5,
        a2a_grpc_port=free_port(),
        mcp_allowed_hosts=["test"],
        **overrides,
    )


async def _stateful_requests(client: httpx.AsyncClient, previous: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    answer = await client.post(
        "/v1/responses",
        json={"model": "recall", "input": "again", "previous_response_id": previous},
    )
    seen["responses"] = (answer.status_code, answer.json()["error"]["code"])
    answer = await client.post("/v1/conversations", json={})
    seen["conversations"] = (answer.status_code, answer.json()["error"]["code"])
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer = await client.post("/a2a/recall", json=body, headers=V1)
    error = answer.json()["error"]  # before a task exists: the JSON-RPC error
    seen["a2a"] = (error["code"], "session store (Redis) is unavailable" in error["message"])
    call = {"name": "recall", "arguments": {"message": "hi", "session_id": "s1"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    answer = await client.post("/mcp", json=body, headers=MCP)
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    result = json.loads(data[-1] if data else answer.text)["result"]
    seen["mcp"] = (result["isError"], result["content"][0]["text"][:32])
    run = {"agent_name": "recall", "input": [{"parts": [{"content": "hi"}]}]}
    answer = await client.post("/acp/runs", json=run)
    seen["acp"] = answer.status_code
    return seen


async def test_redis_down_then_up(own_redis: RedisServer) -> None:
    async with running(AGENTS, settings(own_redis.url), shutdown_timeout=SHUTDOWN) as (_, client):
        ready = await client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["stores"] == {"session_store": "up"}
        first = await client.post("/v1/responses", json={"model": "recall", "input": "one"})
        assert first.status_code == 200, first.text
        previous = first.json()["id"]

        own_redis.stop()
        started = time.monotonic()
        seen = await _stateful_requests(client, previous)
        assert seen == {
            "responses": (503, "store_unavailable"),
            "conversations": (503, "store_unavailable"),
            "a2a": (-32603, True),
            "mcp": (True, "a store is unavailable, try agai"),
            "acp": 503,
        }
        assert time.monotonic() - started < 15
        # Stateless requests go on.
        chat = await client.post(
            "/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "still here"}]},
        )
        assert chat.status_code == 200
        ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["status"] == "degraded"
        assert ready.json()["stores"] == {"session_store": "down"}

        own_redis.start()
        again = await client.post(
            "/v1/responses",
            json={"model": "recall", "input": "two", "previous_response_id": previous},
        )
        assert again.status_code == 200, again.text
        assert again.json()["output"][-1]["content"][0]["text"] == "one | two"
        assert (await client.get("/readyz")).json()["stores"] == {"session_store": "up"}


async def test_a_server_started_without_its_redis_is_not_ready_until_it_answers(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    # Redis is stopped after the server: this test is about readiness. (A shutdown with
    # Redis gone waits out each store's retries, ~3 s here, which under CI load passed
    # the lifespan manager's 5 s.)
    try:
        async with running(AGENTS, settings(server.url), shutdown_timeout=SHUTDOWN) as (_, client):
            ready = await client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["status"] == "store_unavailable"
            assert ready.json()["stores"] == {"session_store": "down"}
            server.start()
            assert (await client.get("/readyz")).status_code == 200
    finally:
        server.stop()


async def test_a_server_started_without_its_postgresql_serves_and_gets_ready_with_it() -> None:
    port = free_port()
    url = f"postgresql+asyncpg://agenthost@127.0.0.1:{port}/agenthost"
    values = settings("memory", a2a_task_store=url)
    async with running(AGENTS, values) as (_, client):
        ready = await client.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.json()["stores"] == {"a2a_task_store": "down"}
        assert ready.json()["status"] == "store_unavailable"
        chat = await client.post(
            "/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "still here"}]},
        )
        assert chat.status_code == 200
        with postgres_server(port):
            deadline = time.monotonic() + 30
            while (await client.get("/readyz")).status_code != 200:
                assert time.monotonic() < deadline, "not ready after PostgreSQL came up"
                await anyio.sleep(0.2)
            message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message},
            }
            task = (await client.post("/a2a/echo", json=body, headers=V1)).json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"


async def _send(client: httpx.AsyncClient, text: str) -> httpx.Response:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return await client.post("/a2a/echo", json=body, headers=V1)


async def _readyz_within(client: httpx.AsyncClient, seconds: float) -> httpx.Response:
    started = time.monotonic()
    ready = await client.get("/readyz")
    assert time.monotonic() - started < seconds, "the readiness check is not bounded"
    return ready


async def test_postgresql_stopped_under_a_running_server_then_back(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with postgres() as database:
        values = settings("memory", a2a_task_store=database.url)
        async with running(AGENTS, values) as (_, client):
            ready = await _readyz_within(client, 10)
            assert ready.status_code == 200, ready.text
            assert ready.json()["stores"] == {"a2a_task_store": "up"}
            before = (await _send(client, "before")).json()["result"]["task"]
            database.stop()
            # Reported down at the next check, quickly; the replica stays in rotation.
            ready = await _readyz_within(client, 10)
            assert ready.status_code == 200, ready.text
            assert ready.json()["stores"] == {"a2a_task_store": "down"}
            assert ready.json()["status"] == "degraded"
            chat = await client.post(
                "/v1/chat/completions",
                json={"model": "echo", "messages": [{"role": "user", "content": "still here"}]},
            )
            assert chat.status_code == 200
            database.start()
            ready = await _readyz_within(client, 10)
            assert ready.json()["stores"] == {"a2a_task_store": "up"}, ready.text
            assert ready.json()["status"] == "ready"
            body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": before["id"]}}
            got = (await client.post("/a2a/echo", json=body, headers=V1)).json()
            assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got
            after = (await _send(client, "after")).json()["result"]["task"]
            assert after["status"]["state"] == "TASK_STATE_COMPLETED"
