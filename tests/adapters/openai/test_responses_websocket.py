"""The Responses API's WebSocket mode, with the openai SDK's ``responses.connect()``.

The app runs under uvicorn on a real port (a WebSocket needs one), once
with auth off and once with API keys.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest
import websockets

from agenthost.agents import Agent, ChatAgent, ToolResultPart
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.testing import call
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.commands import serving
from tests.principals import KEYS, transcript_model
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def weather_model() -> FunctionModel:
    """Calls the client's ``get_weather``; once it has the result, answers with it."""

    def answer(request: ModelRequest) -> Any:
        results = [p for m in request.messages for p in m.parts if isinstance(p, ToolResultPart)]
        if results:
            return f"The result is {results[-1].content}."
        return call("get_weather", '{"city": "Paris"}')

    return FunctionModel(answer, name="weather")


class SlowModel(FunctionModel):
    """Waits until cancelled; tells the test (another thread) when it starts and stops."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        super().__init__(self._wait, name="slow")

    async def _wait(self, request: ModelRequest) -> str:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "too late"


SLOW = SlowModel()
MAX_BYTES = 64 * 1024


def agents() -> dict[str, Agent]:
    return {
        "t": ChatAgent("t", transcript_model()),
        "echo": ChatAgent("echo", EchoModel()),
        "weather": ChatAgent("weather", weather_model()),
        "slow": ChatAgent("slow", SLOW),
    }


@pytest.fixture(scope="module")
def open_server() -> Iterator[str]:
    settings = Settings(max_body_bytes=MAX_BYTES)
    with serve_in_thread(create_app(settings, agents()), lifespan=True) as url:
        yield url


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``agenthost serve`` itself (its uvicorn protocols and limits), with API keys."""
    config = tmp_path_factory.mktemp("websocket") / "agents.yaml"
    config.write_text("agents:\n  - {name: echo, model: echo}\n")
    keys = ",".join(f"{name}:{KEYS[name]}" for name in ("alice", "bob"))
    with serving(config, {**os.environ, "AGENTHOST_API_KEYS": keys}) as (_, url):
        yield url


def client(url: str, key: str = "unused") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)


async def events_of(connection: Any) -> list[Any]:
    """The events of one response, up to its last (``completed``, ``failed``) or an error."""
    events = []
    async for event in connection:
        events.append(event)
        if event.type in ("response.completed", "response.failed", "error"):
            return events
    raise AssertionError("the connection closed mid-response")


async def test_two_chained_responses_on_one_connection(open_server: str) -> None:
    async with client(open_server) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="t", input="my name is Ada")
        first = await events_of(connection)
        types = [e.type for e in first]
        assert types[:2] == ["response.created", "response.in_progress"]
        assert "response.output_text.delta" in types
        assert types[-1] == "response.completed"
        assert [e.sequence_number for e in first] == list(range(len(first)))
        done = first[-1].response
        assert done.output_text == "my name is Ada"
        deltas = "".join(e.delta for e in first if e.type == "response.output_text.delta")
        assert deltas == "my name is Ada"

        await connection.response.create(
            model="t", input="what is my name?", previous_response_id=done.id
        )
        second = (await events_of(connection))[-1]
        assert second.type == "response.completed"
        assert second.response.previous_response_id == done.id
        # The model saw the first exchange: the chain came from the stored response.
        assert second.response.output_text == ("my name is Ada | my name is Ada | what is my name?")
    # Stored as over HTTP: the chain's responses are readable by id.
    async with client(open_server) as sdk:
        stored = await sdk.responses.retrieve(second.response.id)
    assert stored.output_text == second.response.output_text


async def test_a_client_tool_round_trip(open_server: str) -> None:
    async with client(open_server) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(
            model="weather",
            input="weather in Paris?",
            tools=[WEATHER],  # type: ignore[list-item]
        )
        events = await events_of(connection)
        assert "response.function_call_arguments.done" in [e.type for e in events]
        first = events[-1].response
        (item,) = first.output
        assert item.type == "function_call" and item.name == "get_weather"
        assert item.arguments == '{"city": "Paris"}'

        await connection.response.create(
            model="weather",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": item.call_id, "output": "sunny"}],
            tools=[WEATHER],  # type: ignore[list-item]
        )
        answer = (await events_of(connection))[-1]
    assert answer.type == "response.completed"
    assert answer.response.output_text == "The result is sunny."


@pytest.mark.parametrize(
    ("message", "status", "code", "param"),
    [
        ("{not json", 400, "invalid_json", None),
        ('{"type": "response.steer", "input": "x", "previous_response_id": "r"}', 400,
         "unsupported_event_type", "type"),
        ('{"type": "response.create", "model": "t", "input": 5}', 400, "invalid_value", "input"),
        ('{"type": "response.create", "model": "nobody", "input": "hi"}', 404,
         "model_not_found", "model"),
        ('{"type": "response.create", "model": "t", "input": "hi", "background": true}', 400,
         None, "background"),
        ('{"type": "response.create", "model": "t", "input": "hi", '
         '"previous_response_id": "resp_missing"}', 400, "previous_response_not_found",
         "previous_response_id"),
    ],
)  # fmt: skip
async def test_an_error_event_then_a_response_on_the_same_connection(
    open_server: str, message: str, status: int, code: str | None, param: str | None
) -> None:
    async with client(open_server) as sdk, sdk.responses.connect() as connection:
        await connection.send_raw(message)
        error = await connection.recv()
        assert error.type == "error"
        raw: Any = error
        assert raw.status == status
        assert raw.error.code == code
        assert raw.error.param == param
        assert raw.error.message
        # The connection is still open and serves the next request.
        await connection.response.create(model="echo", input="still here")
        events = await events_of(connection)
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "still here"


async def test_a_message_past_the_body_limit_is_an_error_event(open_server: str) -> None:
    async with client(open_server) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="echo", input="x" * MAX_BYTES)
        error: Any = await connection.recv()
        assert error.type == "error" and error.status == 413
        assert error.error.code == "request_too_large"
        await connection.response.create(model="echo", input="small")
        events = await events_of(connection)
    assert events[-1].response.output_text == "small"


async def test_closing_mid_response_cancels_the_run(open_server: str) -> None:
    SLOW.started.clear()
    SLOW.cancelled.clear()
    async with client(open_server) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="slow", input="take your time")
        assert (await connection.recv()).type == "response.created"
        assert await asyncio.to_thread(SLOW.started.wait, 10)
    assert await asyncio.to_thread(SLOW.cancelled.wait, 10)


async def test_the_upgrade_needs_a_key_when_keys_are_on(keyed_server: str) -> None:
    # Refused before the upgrade: the HTTP 401 in the OpenAI envelope, as over HTTP.
    ws_url = keyed_server.replace("http://", "ws://") + "/v1/responses"
    with pytest.raises(websockets.InvalidStatus) as without_key:
        async with websockets.connect(ws_url):
            pass
    with pytest.raises(websockets.InvalidStatus) as wrong_key:
        async with client(keyed_server, "wrong-key") as sdk, sdk.responses.connect() as connection:
            await connection.response.create(model="echo", input="hi")
    for refused in (without_key, wrong_key):
        response = refused.value.response
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert orjson.loads(response.body)["error"]["code"] == "invalid_api_key"

    async with client(keyed_server, KEYS["alice"]) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="echo", input="alice's secret")
        mine = (await events_of(connection))[-1].response
        assert mine.output_text == "alice's secret"
    # The response belongs to alice: bob can neither read it nor continue it.
    async with client(keyed_server, KEYS["bob"]) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="echo", input="and?", previous_response_id=mine.id)
        error: Any = await connection.recv()
        assert error.type == "error" and error.status == 400
        assert error.error.code == "previous_response_not_found"
    async with httpx.AsyncClient() as http:
        read = await http.get(
            f"{keyed_server}/v1/responses/{mine.id}",
            headers={"Authorization": f"Bearer {KEYS['bob']}"},
        )
    assert read.status_code == 404


async def test_a_page_of_another_site_cannot_open_it(open_server: str) -> None:
    # Auth off, a browser's cross-site WebSocket is refused before the upgrade (the Origin check).
    ws_url = open_server.replace("http://", "ws://") + "/v1/responses"
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with websockets.connect(ws_url, origin=websockets.Origin("https://evil.example")):
            pass
    assert refused.value.response.status_code == 403
    assert orjson.loads(refused.value.response.body)["error"]["code"] == "origin_not_allowed"
    async with websockets.connect(ws_url, origin=websockets.Origin(open_server)) as socket:
        await socket.send('{"type": "response.create", "model": "echo", "input": "hi"}')
        message = await socket.recv()
    assert isinstance(message, str)  # events are text messages
    assert orjson.loads(message)["type"] == "response.created"
