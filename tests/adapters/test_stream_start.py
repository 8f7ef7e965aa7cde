"""A streamed run that fails before its first token: the error is in the stream, on every protocol.

Every stream starts (status 200, headers) when its run is accepted, so a
failure that comes before the first token, an upstream that refuses the
key, answers 500 or cannot be reached, or the agent itself, is the
protocol's in-stream error,
read by each protocol's official client: the openai SDK raises an
``APIError`` with the OpenAI error body, the A2A task ends failed, the MCP
tool result is an error, the IBM ACP run ends with ``run.failed``. One
server (on a real socket) for the module. And a client that leaves while
the first token is still awaited stops the upstream request.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import openai
import pytest
from a2a.types import TaskState
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import RunFailedEvent
from mcp import Client as MCPClient
from mcp_types import TextContent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agenthost.agents import Agent, ChatAgent, FunctionAgent, Message
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import sdk_client, user_message
from tests.upstream import FakeUpstream, free_port, serve_in_thread

pytestmark = pytest.mark.anyio


async def _agent_bug(messages: list[Message]) -> str:
    raise RuntimeError("agent bug")


class _Upstream:
    """An OpenAI-compatible upstream that refuses every key (``no-key``) or, for
    ``silent``, sends its headers and then no token: ``silent`` is set when such a
    stream starts, ``abandoned`` when it is closed from the other end (events
    between threads: it runs in the server's)."""

    def __init__(self) -> None:
        self.silent = threading.Event()
        self.abandoned = threading.Event()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        if body["model"] == "no-key":
            error = {"message": "Incorrect API key provided.", "type": "invalid_request_error"}
            return JSONResponse({"error": {**error, "code": "invalid_api_key"}}, 401)
        return StreamingResponse(self._silence(), media_type="text/event-stream")

    async def _silence(self) -> AsyncIterator[bytes]:
        self.silent.set()
        try:
            # No token; comments, so that the server notices the other end leaving.
            for _ in range(1200):
                yield b": waiting\n\n"
                await anyio.sleep(0.05)
            yield b"data: [DONE]\n\n"
        finally:
            self.abandoned.set()


def _agents(upstream: str, own: str) -> dict[str, Agent]:
    def relay(name: str, model: str, base_url: str) -> ChatAgent:
        return ChatAgent(name, OpenAIModel(model, base_url=base_url, api_key="k", max_retries=0))

    return {
        "no-key": relay("no-key", "no-key", own),  # the upstream answers 401
        "broken": relay("broken", "broken", upstream),  # the upstream answers 500
        "unreachable": relay("unreachable", "gpt-test", "http://127.0.0.1:9/v1"),
        "buggy": FunctionAgent("buggy", _agent_bug),
        "silent": relay("silent", "silent", own),
    }


FAILURES = {
    # agent: (the OpenAI error code, what its message says on every protocol)
    "no-key": ("upstream_error", "status 401"),
    "broken": ("upstream_error", "failed with status 500"),
    "unreachable": ("upstream_error", "cannot connect to the upstream"),
    # Each protocol's words for a bug (OpenAI and MCP name the exception's type).
    "buggy": ("internal_error", "RuntimeError|failed unexpectedly"),
}


def says(text: str, agent: str) -> bool:
    return re.search(FAILURES[agent][1], text) is not None and "127.0.0.1" not in text


@pytest.fixture(scope="module")
def own_upstream() -> Iterator[tuple[_Upstream, str]]:
    fake = _Upstream()
    with serve_in_thread(fake.app) as url:
        yield fake, f"{url}/v1"


@pytest.fixture(scope="module")
def served(
    upstream: tuple[FakeUpstream, str], own_upstream: tuple[_Upstream, str]
) -> Iterator[str]:
    settings = Settings(adapters=["openai", "a2a", "mcp", "acp"], a2a_grpc_port=free_port())
    app = create_app(settings, _agents(upstream[1], own_upstream[1]))
    with serve_in_thread(app, lifespan=True) as url:
        yield url


def _openai(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0)


@pytest.mark.parametrize("agent", FAILURES)
async def test_chat_completions_sends_the_error_as_a_chunk_the_sdk_raises(
    served: str, agent: str
) -> None:
    async with _openai(served) as client:
        stream = await client.chat.completions.create(
            model=agent, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        assert stream.response.status_code == 200
        with pytest.raises(openai.APIError) as failed:
            async for _ in stream:
                pass
    code = FAILURES[agent][0]
    assert not isinstance(failed.value, openai.APIStatusError)
    assert isinstance(failed.value.body, dict) and failed.value.body["code"] == code
    assert failed.value.body["type"] in ("api_error", "server_error")
    assert says(failed.value.message, agent)


@pytest.mark.parametrize("agent", FAILURES)
async def test_responses_sends_error_and_response_failed_with_sequence_numbers(
    served: str, agent: str
) -> None:
    code = FAILURES[agent][0]
    async with _openai(served) as client:
        stream = await client.responses.create(model=agent, input="hi", stream=True)
        seen: list[Any] = []
        with pytest.raises(openai.APIError) as failed:
            async for event in stream:
                seen.append(event)
    assert [e.type for e in seen] == ["response.created", "response.in_progress"]
    assert isinstance(failed.value.body, dict) and failed.value.body["code"] == code
    assert says(failed.value.message, agent)
    # What the SDK stopped at, and the terminal event after it, on the wire:
    async with httpx.AsyncClient(timeout=30) as http:
        body = {"model": agent, "input": "hi", "stream": True}
        answer = await http.post(f"{served}/v1/responses", json=body)
    assert answer.status_code == 200
    events = [e.split("\n") for e in answer.text.split("\n\n") if e.startswith("event: ")]
    assert [e[0] for e in events][2:] == ["event: error", "event: response.failed"]
    data = [json.loads(e[1].removeprefix("data: ")) for e in events]
    assert [d["sequence_number"] for d in data] == [0, 1, 2, 3]
    assert data[2]["code"] == code and says(data[2]["message"], agent)
    assert data[3]["response"]["status"] == "failed"
    assert data[3]["response"]["error"]["code"] == "server_error"


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("agent", FAILURES)
async def test_an_a2a_stream_ends_with_the_task_failed(
    served: str, agent: str, transport: str
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await sdk_client(f"{served}/a2a/{agent}", transport, http=http)
        async with client:
            events = [event async for event in client.send_message(user_message("hi"))]
    states = [e.status_update.status for e in events if e.HasField("status_update")]
    assert states[-1].state == TaskState.TASK_STATE_FAILED, events
    text = "".join(p.text for p in states[-1].message.parts)
    assert says(text, agent)


@pytest.mark.parametrize("agent", FAILURES)
async def test_an_mcp_tool_call_ends_with_an_error_result(served: str, agent: str) -> None:
    async with MCPClient(f"{served}/mcp", read_timeout_seconds=30) as client:
        result = await client.call_tool(agent, {"message": "hi"})
    assert result.is_error
    first = result.content[0]
    assert isinstance(first, TextContent) and says(first.text, agent)


@pytest.mark.parametrize("agent", FAILURES)
async def test_an_acp_stream_ends_with_run_failed(served: str, agent: str) -> None:
    async with ACPClient(base_url=f"{served}/acp", timeout=30) as client:
        events = [event async for event in client.run_stream("hi", agent=agent)]
    assert isinstance(events[-1], RunFailedEvent), events[-1]
    assert events[-1].run.error is not None
    assert says(events[-1].run.error.message, agent)


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
async def test_a_client_that_leaves_before_the_first_token_stops_the_upstream(
    served: str, own_upstream: tuple[_Upstream, str], endpoint: str
) -> None:
    fake = own_upstream[0]
    fake.silent.clear()
    fake.abandoned.clear()
    async with _openai(served) as client:
        stream: Any
        with anyio.fail_after(5):  # the stream opens while the upstream is silent
            if endpoint == "chat":
                stream = await client.chat.completions.create(
                    model="silent", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            else:
                stream = await client.responses.create(model="silent", input="hi", stream=True)
            await anext(aiter(stream))
        # Leave once the upstream request is under way (not before it is sent).
        assert await anyio.to_thread.run_sync(fake.silent.wait, 5)
        await stream.close()
    left = await anyio.to_thread.run_sync(fake.abandoned.wait, 5)
    assert left, "the upstream request went on after the client left"
