"""The ``openai`` provider's SSE reading against a real aiohttp server.

The shared fake upstream (``tests/upstream.py``) sends one-line events with
``\\n`` endings; servers also send ``\\r\\n`` line endings, events with
several ``data:`` lines, comments and error events mid-stream.
"""

from collections.abc import AsyncIterator

import openai
import pytest
from aiohttp import web

from agenthost.agents import Message, ModelError
from agenthost.agents.models.base import ModelRequest, ModelResponse
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.openai_http import ChatClient, _data
from agenthost.agents.options import ModelSettings
from agenthost.agents.results import TextDelta
from tests.aiohttp_upstream import chat_upstream

pytestmark = pytest.mark.anyio

_DELTA = '{"choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}'
_STOP = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
STREAMS = {
    # CRLF endings, a comment, an event split over two data lines, an SSE id line.
    "crlf": (
        ": keep-alive\r\n\r\n"
        f"data: {_DELTA % 'Hello'}\r\n\r\n"
        'id: 7\r\ndata: {"choices":[{"index":0,"delta":\r\ndata: {"content":", world"}}]}\r\n\r\n'
        f"data: {_STOP}\r\n\r\ndata: [DONE]\r\n\r\n"
    ),
    "error": f'data: {_DELTA % "Hi"}\n\ndata: {{"error": {{"message": "overloaded"}}}}\n\n',
}


@pytest.fixture
async def upstream_url() -> AsyncIterator[str]:
    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        text = STREAMS[body["model"]]
        for start in range(0, len(text), 7):  # small writes: events split across reads
            await response.write(text[start : start + 7].encode())
        await response.write_eof()
        return response

    async with chat_upstream(chat) as url:
        yield url


async def _events(url: str, model: str) -> list[object]:
    provider = OpenAIModel(model, base_url=url, api_key="k", max_retries=0)
    request = ModelRequest(messages=(Message.user("hi"),), settings=ModelSettings())
    try:
        return [event async for event in provider.stream(request)]
    finally:
        await provider.aclose()


async def test_crlf_multi_line_and_comment_events_are_read(upstream_url: str) -> None:
    events = await _events(upstream_url, "crlf")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", world"]
    response = events[-1]
    assert isinstance(response, ModelResponse) and response.message.text == "Hello, world"


async def test_an_error_event_mid_stream_is_a_model_error(upstream_url: str) -> None:
    with pytest.raises(ModelError, match="overloaded"):
        await _events(upstream_url, "error")


def test_data_of_an_event() -> None:
    assert _data(b"data: x") == b"x"
    assert _data(b"data:x") == b"x"
    assert _data(b"event: e\ndata: a\ndata: b") == b"a\nb"
    assert _data(b": comment") is None


# (status, body): an error envelope, a bare JSON object, text, an unnamed 4xx and 5xx.
ANSWERS = [
    (400, b'{"error": {"message": "bad", "type": "invalid_request_error"}}'),
    (401, b'{"error": {"message": "no key"}}'),
    (403, b'{"error": {"message": ""}}'),
    (404, b'{"detail": "not here"}'),
    (409, b"conflict"),
    (422, b"[1, 2]"),
    (429, b'{"error": {"message": "slow down"}}'),
    (418, b'{"error": {"message": "teapot"}}'),
    (500, b""),
    (503, b'{"error": "overloaded"}'),
]


@pytest.mark.parametrize(("status", "body"), ANSWERS)
async def test_an_error_answer_is_the_exception_the_sdk_raises(status: int, body: bytes) -> None:
    # The table in openai_http against the SDK's own client on the same answer.
    async def chat(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, body=body, content_type="application/json")

    async with chat_upstream(chat) as url:
        sdk = openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
        with pytest.raises(openai.APIStatusError) as expected:
            await sdk.chat.completions.create(model="m", messages=[])
        client = ChatClient(openai.AsyncOpenAI(base_url=url, api_key="k"), timeout=5)
        try:
            with pytest.raises(openai.APIStatusError) as ours:
                await client.open({"model": "m", "messages": []})
        finally:
            await client.aclose()
            await sdk.close()
    assert type(ours.value) is type(expected.value)
    assert str(ours.value) == str(expected.value)
    assert ours.value.body == expected.value.body
    assert ours.value.status_code == status
