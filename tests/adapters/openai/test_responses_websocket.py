"""The Responses API's WebSocket mode, with the openai SDK's ``responses.connect()``.

The app runs under uvicorn on a real port (a WebSocket needs one), once
with auth off and once with API keys.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest
import websockets
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agenthost.agents import Agent, ChatAgent, ToolResultPart
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.testing import call
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.app.identity.provider import SigningKey
from tests.commands import serving
from tests.principals import KEYS, keyed_settings, transcript_model
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


# Each response.create is admitted as an HTTP request is (adapters/openai/websocket_checks.py).

RATE = 3


@pytest.fixture(scope="module")
def quota_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """API keys with quotas: ``RATE`` requests a minute each; bob also 5 model tokens a day."""
    quotas = tmp_path_factory.mktemp("quotas") / "quotas.yaml"
    quotas.write_text("principals:\n  bob: {requests_per_minute: 100, tokens_per_day: 5}\n")
    settings = keyed_settings(quota_requests_per_minute=RATE, quotas_file=quotas)
    with serve_in_thread(create_app(settings, agents()), lifespan=True) as url:
        yield url


async def test_each_message_counts_against_the_request_rate(quota_server: str) -> None:
    async with client(quota_server, KEYS["alice"]) as sdk, sdk.responses.connect() as connection:
        for n in range(RATE):
            await connection.response.create(model="echo", input=f"turn {n}")
            assert (await events_of(connection))[-1].type == "response.completed"
        # Past the rate: an error event per message, and the connection stays open.
        for _ in range(2):
            await connection.response.create(model="echo", input="one more")
            refused: Any = await connection.recv()
            assert refused.type == "error" and refused.status == 429
            assert refused.error.code == "rate_limit_exceeded"
            assert "3 requests a minute" in refused.error.message
    # The messages counted with alice's HTTP requests: one rate for both.
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{quota_server}/v1/responses",
            json={"model": "echo", "input": "over HTTP"},
            headers={"Authorization": f"Bearer {KEYS['alice']}"},
        )
        assert answer.status_code == 429
        # Another key has a rate of its own.
        other = await http.post(
            f"{quota_server}/v1/responses",
            json={"model": "echo", "input": "hi"},
            headers={"Authorization": f"Bearer {KEYS['t1/alice']}"},
        )
    assert other.status_code == 200


async def test_a_message_run_spends_the_day_s_tokens(quota_server: str) -> None:
    async with client(quota_server, KEYS["bob"]) as sdk, sdk.responses.connect() as connection:
        await connection.response.create(model="echo", input="one two three four five six")
        assert (await events_of(connection))[-1].type == "response.completed"
        # Its 12 tokens counted against bob's 5: the next run is refused until midnight.
        refused: Any = None
        for _ in range(50):  # the count is written just after the run ends
            await connection.response.create(model="echo", input="again")
            first: Any = await connection.recv()
            if first.type == "error":
                refused = first
                break
            await events_of(connection)
            await asyncio.sleep(0.1)
        assert refused is not None and refused.status == 429
        assert "model tokens of the day" in refused.error.message


AUDIENCE = "https://agenthost.test/"
SIGNER = SigningKey("k1")


def issuer_app() -> Starlette:
    """A real HTTP OpenID issuer of discovery and signing keys only (tokens are signed here)."""

    async def discovery(request: Request) -> JSONResponse:
        issuer = str(request.base_url).rstrip("/")
        return JSONResponse({"issuer": issuer, "jwks_uri": f"{issuer}/jwks"})

    async def jwks(request: Request) -> JSONResponse:
        public = orjson.loads(RSAAlgorithm.to_jwk(SIGNER.private.public_key()))
        return JSONResponse({"keys": [{**public, "kid": SIGNER.kid, "alg": "RS256"}]})

    return Starlette(
        routes=[Route("/.well-known/openid-configuration", discovery), Route("/jwks", jwks)]
    )


@pytest.fixture(scope="module")
def token_server() -> Iterator[tuple[str, str]]:
    """OIDC tokens on (no clock skew), with the issuer; yields (server URL, issuer)."""
    with serve_in_thread(issuer_app()) as issuer:
        settings = keyed_settings(
            oidc_issuer=issuer, oidc_audience=AUDIENCE, oidc_clock_skew_seconds=0
        )
        with serve_in_thread(create_app(settings, agents()), lifespan=True) as url:
            yield url, issuer


async def test_a_token_that_expires_closes_the_connection(token_server: tuple[str, str]) -> None:
    url, issuer = token_server
    now = int(time.time())
    token = SIGNER.sign({"iss": issuer, "aud": AUDIENCE, "sub": "svc", "iat": now, "exp": now + 3})
    ws_url = url.replace("http://", "ws://") + "/v1/responses"
    create = orjson.dumps({"type": "response.create", "model": "echo", "input": "hi"}).decode()
    headers = {"Authorization": f"Bearer {token}"}
    async with websockets.connect(ws_url, additional_headers=headers) as socket:
        await socket.send(create)
        while orjson.loads(await socket.recv())["type"] != "response.completed":
            pass
        await asyncio.sleep(max(0.0, now + 3.5 - time.time()))  # past exp
        await socket.send(create)
        error = orjson.loads(await socket.recv())
        assert error["type"] == "error" and error["status"] == 401
        assert error["error"]["code"] == "invalid_token"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await socket.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    # An API key on the same server keeps its connection: nothing of it expires.
    async with client(url, KEYS["alice"]) as sdk, sdk.responses.connect() as connection:
        for text in ("first", "second"):
            await connection.response.create(model="echo", input=text)
            assert (await events_of(connection))[-1].response.output_text == text
