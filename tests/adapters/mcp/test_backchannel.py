"""Stateless mode: a server request on the call's own stream, answered by a POST of its own.

Raw JSON-RPC over a real socket, with API keys: the answer is routed to the
waiting call by its (unguessable) id, for the principal that made the call
only; any other answer is a 404 in JSON-RPC's shape and changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import orjson
import pytest

from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import INITIALIZE, mcp_settings
from tests.adapters.mcp.test_ask_user import weather_agent
from tests.principals import KEYS, bearer
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    settings = mcp_settings(mcp_stateless=True, api_keys=[f"{n}:{k}" for n, k in KEYS.items()])
    with serve_in_thread(create_app(settings, {"weather": weather_agent()}), lifespan=True) as base:
        yield f"{base}/mcp"


def initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": capabilities}}


async def events(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield orjson.loads(line[5:])


async def post(client: httpx2.AsyncClient, url: str, who: str, body: Any) -> httpx2.Response:
    return await client.post(url, json=body, headers={**HEADERS, **bearer(who)})


async def test_the_answer_reaches_the_call_that_asked_and_no_other(url: str) -> None:
    async with httpx2.AsyncClient(timeout=60) as client:
        await post(client, url, "alice", initialize({"elicitation": {}}))
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "weather", "arguments": {"message": "weather?"}},
        }
        headers = {**HEADERS, **bearer("alice")}
        async with client.stream("POST", url, json=call, headers=headers) as response:
            stream = events(response)
            asked = await anext(stream)
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["message"] == "Which city?"
            request_id = asked["id"]
            assert isinstance(request_id, str) and len(request_id) > 20  # unguessable
            answer = {"action": "accept", "content": {"answer": "Oslo"}}
            reply = {"jsonrpc": "2.0", "id": request_id, "result": answer}

            unknown = await post(client, url, "alice", {**reply, "id": "srv-guessed"})
            other = await post(client, url, "bob", {**reply, "result": {"action": "decline"}})
            for refused in (unknown, other):
                assert refused.status_code == 404
                assert refused.json()["error"]["code"] == -32600
            accepted = await post(client, url, "alice", reply)
            assert accepted.status_code == 202
            again = await post(client, url, "alice", reply)  # the call no longer waits
            assert again.status_code == 404

            result = await anext(stream)
    assert result["id"] == 7
    assert result["result"]["structuredContent"]["text"] == "It is sunny in Oslo."


async def test_a_client_that_declared_no_elicitation_gets_the_question_as_the_result(
    url: str,
) -> None:
    async with httpx2.AsyncClient(timeout=60) as client:
        await post(client, url, "bob", initialize({}))
        call = {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "weather", "arguments": {"message": "weather?"}},
        }
        response = await post(client, url, "bob", call)
    (result,) = [m for m in _sse(response.text)]
    assert result["result"]["structuredContent"]["status"] == "input_required"


def _sse(text: str) -> list[dict[str, Any]]:
    return [
        orjson.loads(line[5:])
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]
