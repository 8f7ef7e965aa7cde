"""The ``openai`` provider's SSE reading against a real aiohttp server.

The shared fake upstream (``tests/upstream.py``) sends one-line events with
``\\n`` endings; servers also send ``\\r\\n`` line endings, events with
several ``data:`` lines, comments and error events mid-stream.
"""

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from agenthost.agents import Message, ModelError
from agenthost.agents.models.base import ModelRequest, ModelResponse
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.openai_http import _data
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
