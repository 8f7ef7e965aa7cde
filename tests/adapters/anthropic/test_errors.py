"""Every Messages failure in Anthropic's error shape with its status; bad input is a 4xx.

The SDK's exception class follows the status; the body is always
``{"type": "error", "error": {"type": …, "message": …}}``.
"""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import anyio
import httpx2
import pytest

from agenthost.agents import Agent, ChatAgent, ModelBusy, RunRefused
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.app.settings import Settings
from tests.adapters.anthropic.clients import running, sdk

pytestmark = pytest.mark.anyio

KEY = "alice-key-0123456789abcdef"
HI: Any = [{"role": "user", "content": "hi"}]


def _refuse(request: ModelRequest) -> str:
    raise RunRefused("not for you")


def _busy(request: ModelRequest) -> str:
    raise ModelBusy("the upstream is busy", retry_after=3)


def _crash(request: ModelRequest) -> str:
    raise RuntimeError("boom")


released = anyio.Event()


async def _wait(request: ModelRequest) -> str:
    await released.wait()
    return "done"


class _MidStreamFailure(ChatAgent):
    """Says its first update, then fails: the stream has begun."""

    async def _session_turn(self, history, input, options, *, stream, session):  # type: ignore[no-untyped-def]
        turn = super()._session_turn(history, input, options, stream=stream, session=session)
        async for update in turn:
            yield update
            raise RuntimeError("lost the upstream")


AGENTS: dict[str, Agent] = {
    "echo": ChatAgent("echo", EchoModel()),
    "refusing": ChatAgent("refusing", FunctionModel(_refuse)),
    "busy": ChatAgent("busy", FunctionModel(_busy)),
    "crashing": ChatAgent("crashing", FunctionModel(_crash)),
    "waiting": ChatAgent("waiting", FunctionModel(_wait)),
    "mid": _MidStreamFailure("mid", FunctionModel(lambda request: "fine")),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    settings = Settings(api_keys=[f"alice:{KEY}"], max_requests_per_principal=1)  # type: ignore[list-item]
    async with running(AGENTS, settings) as http:
        yield http


def check_shape(body: object, type: str) -> None:
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == type and body["error"]["message"]


async def test_x_api_key_and_bearer_are_both_accepted(http: httpx2.AsyncClient) -> None:
    for client in (sdk(http, api_key=KEY), sdk(http, api_key=None, auth_token=KEY)):
        message = await client.messages.create(model="echo", max_tokens=10, messages=HI)
        assert message.content[0].type == "text" and message.content[0].text == "hi"


@pytest.mark.parametrize(
    ("model", "error", "status", "type"),
    [
        ("nope", anthropic.NotFoundError, 404, "not_found_error"),
        ("refusing", anthropic.PermissionDeniedError, 403, "permission_error"),
        ("busy", anthropic.OverloadedError, 529, "overloaded_error"),
        ("crashing", anthropic.InternalServerError, 500, "api_error"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
async def test_a_runs_failure_has_its_status_and_type(
    http: httpx2.AsyncClient,
    model: str,
    error: type[anthropic.APIStatusError],
    status: int,
    type: str,
    stream: bool,
) -> None:
    client = sdk(http, api_key=KEY)
    if stream and model != "nope":
        # A stream starts once the request is accepted (a slow first token behind a proxy):
        # a run failing before its first token ends it with the error event, which the SDK
        # raises with the error's type (the response itself was a 200).
        with pytest.raises(anthropic.APIStatusError) as caught:
            async with client.messages.stream(model=model, max_tokens=10, messages=HI) as events:
                await events.get_final_message()
        assert caught.value.status_code == 200
        check_shape(caught.value.body, type)
        return
    with pytest.raises(error) as caught:
        if stream:
            async with client.messages.stream(model=model, max_tokens=10, messages=HI) as events:
                await events.get_final_message()
        else:
            await client.messages.create(model=model, max_tokens=10, messages=HI)
    assert caught.value.status_code == status
    check_shape(caught.value.body, type)
    retry = caught.value.response.headers.get("x-should-retry")
    assert retry == ("false" if model == "crashing" else None)
    if model == "busy":
        assert caught.value.response.headers["retry-after"] == "3"


async def test_a_wrong_key_is_an_authentication_error(http: httpx2.AsyncClient) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        await sdk(http, api_key="wrong-key-0123456789").messages.create(
            model="echo", max_tokens=10, messages=HI
        )
    check_shape(caught.value.body, "authentication_error")
    answer = await http.post("/v1/messages/count_tokens", json={})  # no key at all
    assert answer.status_code == 401
    check_shape(answer.json(), "authentication_error")


async def test_too_many_requests_in_flight_is_a_rate_limit_error(
    http: httpx2.AsyncClient,
) -> None:
    client = sdk(http, api_key=KEY)
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: client.messages.create(model="waiting", max_tokens=5, messages=HI))
        await anyio.sleep(0.2)
        try:
            with pytest.raises(anthropic.RateLimitError) as caught:
                await client.messages.create(model="echo", max_tokens=5, messages=HI)
        finally:
            released.set()
    check_shape(caught.value.body, "rate_limit_error")
    assert caught.value.response.headers["retry-after"] == "1"


async def test_a_failure_mid_stream_is_an_error_event(http: httpx2.AsyncClient) -> None:
    client = sdk(http, api_key=KEY)
    received: list[str] = []
    with pytest.raises(anthropic.APIStatusError, match="internal error: RuntimeError") as caught:
        async with client.messages.stream(model="mid", max_tokens=10, messages=HI) as stream:
            async for text in stream.text_stream:
                received.append(text)
    assert received == ["fine"]
    check_shape(caught.value.body, "api_error")


async def test_a_body_too_large_is_request_too_large() -> None:
    async with running(AGENTS, Settings(max_body_bytes=1024)) as http:
        answer = await http.post(
            "/v1/messages",
            json={
                "model": "echo",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "x" * 2000}],
            },
        )
    assert answer.status_code == 413
    check_shape(answer.json(), "request_too_large")


def message(**extra: Any) -> dict[str, Any]:
    return {"model": "echo", "max_tokens": 10, "messages": HI, **extra}


def user(*blocks: Any) -> dict[str, Any]:
    return message(messages=[{"role": "user", "content": list(blocks)}])


DEEP: Any = []
for _ in range(100):  # past the JSON nesting limit (AGENTHOST_MAX_JSON_DEPTH)
    DEEP = [DEEP]

BAD: dict[str, Any] = {
    "array": [],
    "string": "hello",
    "no-model": {"max_tokens": 5, "messages": HI},
    "no-max-tokens": {"model": "echo", "messages": HI},
    "zero-max-tokens": message(max_tokens=0),
    "max-tokens-text": message(max_tokens="ten"),
    "no-messages": message(messages=[]),
    "system-only": message(messages=[{"role": "system", "content": "x"}]),
    "tool-role": message(messages=[{"role": "tool", "content": "x"}]),
    "content-number": message(messages=[{"role": "user", "content": 5}]),
    "empty-content": message(messages=[{"role": "user", "content": []}]),
    "unknown-block": user({"type": "video", "url": "x"}),
    "text-without-text": user({"type": "text"}),
    "image-without-data": user({"type": "image", "source": {"type": "base64"}}),
    "tool-use-from-user": user({"type": "tool_use", "id": "t", "name": "n", "input": {}}),
    "tool-result-from-assistant": message(
        messages=[
            *HI,
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
        ]
    ),
    "tool-use-input-list": message(
        messages=[
            *HI,
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "n", "input": []}],
            },
        ]
    ),
    "temperature-3": message(temperature=3),
    "top-k": message(top_k=5),
    "mcp-servers": message(mcp_servers=[{"type": "url", "url": "https://x", "name": "x"}]),
    "container": message(container="container_1"),
    "file-source": user({"type": "image", "source": {"type": "file", "file_id": "file_1"}}),
    # The echo agent's model cannot constrain its output.
    "output-format": message(output_config={"format": {"type": "json_schema", "schema": {}}}),
    "output-format-type": message(output_config={"format": {"type": "regex"}}),
    "stop-sequences-text": message(stop_sequences="END"),
    "system-number": message(system=5),
    "tools-object": message(tools={"name": "x"}),
    "tool-without-name": message(tools=[{"input_schema": {}}]),
    "tool-choice-unknown": message(tool_choice={"type": "sometimes"}),
    "stream-text": message(stream="yes"),
    "deep": message(metadata={"a": DEEP}),
}


@pytest.mark.parametrize("body", list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens"])
async def test_bad_input_is_a_4xx_in_anthropics_shape(
    http: httpx2.AsyncClient, path: str, body: Any
) -> None:
    answer = await http.post(path, json=body, headers={"x-api-key": KEY})
    if path.endswith("count_tokens") and answer.status_code == 200:
        return  # a field only creating a message reads (max_tokens, top_k, stream...)
    assert answer.status_code == 400, answer.text
    check_shape(answer.json(), "invalid_request_error")


@pytest.mark.parametrize(
    ("method", "path", "status", "headers", "content"),
    [
        ("GET", "/v1/messages", 405, {}, None),
        ("POST", "/v1/messages/batches", 404, {}, b"{}"),
        ("POST", "/v1/messages", 400, {"content-type": "application/json"}, b"{not json"),
        ("POST", "/v1/messages", 415, {"content-type": "text/plain"}, b"hi"),
        ("POST", "/v1/messages", 403, {"origin": "https://evil.example"}, b"{}"),
    ],
    ids=["method", "route", "json", "media-type", "origin"],
)
async def test_the_apps_own_refusals_are_in_anthropics_shape(
    http: httpx2.AsyncClient,
    method: str,
    path: str,
    status: int,
    headers: dict[str, str],
    content: bytes | None,
) -> None:
    answer = await http.request(
        method, path, content=content, headers={"x-api-key": KEY, **headers}
    )
    assert answer.status_code == status
    type = {403: "permission_error", 404: "not_found_error"}.get(status, "invalid_request_error")
    check_shape(answer.json(), type)
