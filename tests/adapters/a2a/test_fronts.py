"""The JSON-RPC and HTTP+JSON fronts answer as the SDK's own routes do, byte for byte.

The fronts (``adapters/a2a/rpc.py``, ``rest.py``) parse a 1.0 request once
and call the SDK's request handler themselves; the SDK's routes (still in
the agent's app, for 0.3 and malformed requests) are driven here directly
on the same handler, so that each answer can be compared with the SDK's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import orjson
import pytest

from agenthost.adapters.a2a.adapter import A2AAdapter
from agenthost.adapters.base import AdapterContext
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.memory import LRUMemoryManager
from tests.adapters.a2a.support import V1, rpc

pytestmark = pytest.mark.anyio

MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "héllo ☃ there"}]}


@asynccontextmanager
async def front_and_sdk(
    front: str = "rpc",
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients for one of the agent's fronts and for the SDK's routes, on one handler."""
    memory = LRUMemoryManager("a2a", max_sessions=10, ttl=60)
    adapter = A2AAdapter(
        AdapterContext(agents={"echo": ChatAgent("echo", EchoModel())}, memory=memory)
    )
    service = adapter.services["echo"]
    async with adapter.lifespan():
        app = service.rpc if front == "rpc" else service.send
        sdk = httpx.ASGITransport(app=service.app)
        async with (
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://localhost"
            ) as ours,
            httpx.AsyncClient(transport=sdk, base_url="http://localhost") as theirs,
        ):
            yield ours, theirs


async def _both(
    ours: httpx.AsyncClient,
    theirs: httpx.AsyncClient,
    body: Any,
    headers: dict[str, str],
    path: str = "/",
) -> tuple[httpx.Response, httpx.Response]:
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    headers = {**headers, "content-type": "application/json"}
    return (
        await ours.post(path, content=content, headers=headers),
        await theirs.post(path, content=content, headers=headers),
    )


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: "<id>"
            if k in ("id", "taskId", "contextId", "artifactId", "timestamp")
            else _without_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


async def test_unary_answers_are_the_sdk_routes_bytes() -> None:
    async with front_and_sdk() as (ours, theirs):
        sent = await ours.post("/", json=rpc("SendMessage", {"message": MESSAGE}), headers=V1)
        assert sent.status_code == 200
        assert sent.headers["content-type"] == "application/json"
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        other = await theirs.post("/", json=rpc("SendMessage", {"message": MESSAGE}), headers=V1)
        assert _without_ids(sent.json()) == _without_ids(other.json())
        requests: list[tuple[Any, dict[str, str]]] = [
            (rpc("GetTask", {"id": task["id"]}), V1),
            (rpc("GetTask", {"id": task["id"], "historyLength": 1}, id="s-1"), V1),
            (rpc("ListTasks", {}), V1),
            (rpc("CancelTask", {"id": task["id"]}), V1),  # finished: not cancelable
            (rpc("GetTask", {"id": "nope"}), V1),
            (rpc("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "x"}), V1),
            (rpc("ListTaskPushNotificationConfigs", {"taskId": task["id"]}), V1),
            (rpc("GetExtendedAgentCard", {}), V1),
            # What the front hands on to the SDK's route: the same answer either way.
            (rpc("GetTask", {"id": task["id"]}), {}),  # no A2A-Version: 0.3, wrong method
            (rpc("tasks/get", {"id": task["id"]}), {}),  # a 0.3 method
            (rpc("GetTask", {"id": 5}), V1),  # params the SDK refuses
            (rpc("GetTask", [task["id"]]), V1),
            ({"jsonrpc": "2.0", "id": True, "method": "GetTask", "params": {}}, V1),
            ({"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {}}, V1),
            ({**rpc("GetTask", {"id": "nope"}), "extra": 1}, V1),
            ([rpc("GetTask", {"id": "nope"})], V1),
            (rpc("NoSuchMethod", {}), V1),
            (rpc("GetTask", {"id": "nope"}), {"A2A-Version": "2.0"}),
        ]
        for body, headers in requests:
            mine, sdk = await _both(ours, theirs, body, headers)
            assert (mine.status_code, mine.content) == (sdk.status_code, sdk.content), body


async def test_a_body_that_is_not_json_is_a_parse_error() -> None:
    async with front_and_sdk() as (ours, _):
        for body in (b"{not json", b"\xff\xfe", b"[" * 300 + b"]" * 300):
            answer = await ours.post("/", content=body, headers=V1)
            assert answer.status_code == 200
            error = answer.json()
            assert error["id"] is None and error["error"]["code"] == -32700, body


async def test_a_stream_sends_the_sdk_routes_events() -> None:
    async with front_and_sdk() as (ours, theirs):
        streams = []
        for client in (ours, theirs):
            request = rpc("SendStreamingMessage", {"message": MESSAGE}, id="r-7")
            async with client.stream("POST", "/", json=request, headers=V1) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                data = [
                    orjson.loads(line.removeprefix("data:"))
                    async for line in stream.aiter_lines()
                    if line.startswith("data:")
                ]
                assert [d["id"] for d in data] == ["r-7"] * len(data)
                streams.append([_without_ids(d) for d in data])
        ours_events, sdk_events = streams
        assert ours_events == sdk_events
        assert [e["jsonrpc"] for e in ours_events] == ["2.0"] * len(ours_events)
        assert len(ours_events) >= 3
        # A task that is over: SubscribeToTask is refused up front, as one JSON answer.
        task_id = (await ours.post("/", json=rpc("ListTasks", {}), headers=V1)).json()
        first = task_id["result"]["tasks"][0]["id"]
        mine, sdk = await _both(ours, theirs, rpc("SubscribeToTask", {"id": first}), V1)
        assert (mine.status_code, mine.content) == (sdk.status_code, sdk.content)
        assert mine.json()["error"]["code"] < 0


async def test_message_send_over_http_json_is_the_sdk_routes_answer() -> None:
    async with front_and_sdk("rest") as (ours, theirs):
        mine, sdk = await _both(ours, theirs, {"message": MESSAGE}, V1, "/message:send")
        assert (mine.status_code, mine.headers["content-type"]) == (200, "application/a2a+json")
        assert sdk.headers["content-type"] == "application/a2a+json"
        assert _without_ids(mine.json()) == _without_ids(sdk.json())
        assert mine.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        refused: list[tuple[Any, dict[str, str]]] = [
            ({"message": {"role": "ROLE_USER"}}, V1),  # the handler's validation: 400
            ({"message": MESSAGE}, {}),  # no A2A-Version: the SDK's route
            (b"{oops", V1),
            (b"\xff\xfe", V1),
            (b"[1]", V1),
            ({"message": {"messageId": 5}}, V1),
        ]
        for body, headers in refused:
            for path in ("/message:send", "/message:stream"):
                mine, sdk = await _both(ours, theirs, body, headers, path)
                assert (mine.status_code, mine.headers.get("content-type"), mine.content) == (
                    sdk.status_code,
                    sdk.headers.get("content-type"),
                    sdk.content,
                ), (body, path)


async def test_message_stream_over_http_json_sends_the_sdk_routes_events() -> None:
    async with front_and_sdk("rest") as (ours, theirs):
        streams = []
        for client in (ours, theirs):
            request = {"message": MESSAGE}
            async with client.stream("POST", "/message:stream", json=request, headers=V1) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                streams.append(
                    [
                        _without_ids(orjson.loads(line.removeprefix("data:")))
                        async for line in stream.aiter_lines()
                        if line.startswith("data:")
                    ]
                )
        assert streams[0] == streams[1]
        assert len(streams[0]) >= 3
