"""Images and documents over the Messages API, with the official anthropic SDK.

In a user turn and in a client tool's ``tool_result``, base64 and URL sources
reach an ``openai:`` upstream (the fake, tests/upstream.py) as Chat Completions
``image_url`` and ``file`` parts, as ``/v1``'s do; a tool result's files in a
user message right after the tool message. A model that takes text only
refuses them with a 400 ``invalid_request_error``, as on ``/v1``.
"""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from tests.adapters.anthropic.clients import running, sdk
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgo="  # the start of a PNG: the fake upstream does not read it
BASE64_IMAGE: Any = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
}
URL_IMAGE: Any = {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}
PDF: Any = {
    "type": "document",
    "title": "a.pdf",
    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
}
SCREENSHOT: Any = {
    "name": "screenshot",
    "description": "A screenshot of the screen.",
    "input_schema": {"type": "object", "properties": {}},
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(upstream: tuple[FakeUpstream, str]) -> AsyncIterator[anthropic.AsyncAnthropic]:
    _, url = upstream
    relay = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    agents: dict[str, Agent] = {
        "relay": ChatAgent("relay", relay),
        "echo": ChatAgent("echo", EchoModel()),
    }
    async with running(agents) as http:
        yield sdk(http)
    await relay.aclose()


async def test_images_and_documents_in_a_user_turn_reach_the_upstream(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    text = {"type": "text", "text": "what is in these?"}
    message = await client.messages.create(
        model="relay",
        max_tokens=100,
        messages=[{"role": "user", "content": [text, BASE64_IMAGE, URL_IMAGE, PDF]}],
    )
    assert message.stop_reason == "end_turn"
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert sent == [
        {"type": "text", "text": "what is in these?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {
            "type": "file",
            "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="},
        },
    ]


async def test_a_tool_results_images_reach_the_upstream_after_it(
    client: anthropic.AsyncAnthropic, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    ask: Any = {"role": "user", "content": "use screenshot with {}"}
    first = await client.messages.create(
        model="relay", max_tokens=100, tools=[SCREENSHOT], messages=[ask]
    )
    assert first.stop_reason == "tool_use"
    (call,) = first.content
    assert call.type == "tool_use"
    result = {
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": [{"type": "text", "text": "the screen:"}, BASE64_IMAGE, URL_IMAGE],
    }
    async with client.messages.stream(
        model="relay",
        max_tokens=100,
        tools=[SCREENSHOT],
        messages=[
            ask,
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [result, {"type": "text", "text": "describe it"}]},
        ],
    ) as stream:
        final = await stream.get_final_message()
    assert final.stop_reason == "end_turn"
    *_, tool, images = fake.requests[-1]["messages"]
    assert tool == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": "the screen:\n\n[2 attached file(s): in the message that follows]",
    }
    assert images == {
        "role": "user",
        "content": [
            {"type": "text", "text": f"Attached to the result of screenshot (call {call.id}):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            {"type": "text", "text": "describe it"},
        ],
    }


def _tool_turns(*content: Any) -> list[Any]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "screenshot", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": list(content)}
    return [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": [BASE64_IMAGE]}],
        [{"role": "user", "content": [URL_IMAGE]}],
        _tool_turns(BASE64_IMAGE),
        _tool_turns({"type": "text", "text": "see"}, URL_IMAGE),
    ],
    ids=["base64", "url", "tool-result", "tool-result-url"],
)
async def test_a_text_only_model_refuses_images(
    client: anthropic.AsyncAnthropic, messages: list[Any]
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="echo", max_tokens=100, messages=messages)
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    assert (
        error["message"] == "messages: model 'echo' takes text only; it cannot read this image part"
    )


@pytest.mark.parametrize(
    ("block", "says"),
    [
        (
            {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
            "messages.0.content.0.source.type: 'file' sources are not served",
        ),
        (
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "text/plain", "data": "x"},
            },
            "messages.0.content.0.source.media_type: 'text/plain' is not an image type",
        ),
        (
            {"type": "image", "source": {"type": "text", "data": "x"}},
            "messages.0.content.0.source: a text source is for documents",
        ),
        (
            {"type": "image", "source": {"type": "url"}},
            "messages.0.content.0.source: a url source needs",
        ),
    ],
    ids=["file-source", "not-an-image", "text-image", "url-without-url"],
)
async def test_sources_that_cannot_be_served_are_400s(
    client: anthropic.AsyncAnthropic, block: Any, says: str
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=says):
        await client.messages.create(
            model="relay", max_tokens=100, messages=[{"role": "user", "content": [block]}]
        )


async def test_a_bad_source_in_a_tool_result_is_named(client: anthropic.AsyncAnthropic) -> None:
    bad = {"type": "image", "source": {"type": "file", "file_id": "file_1"}}
    with pytest.raises(anthropic.BadRequestError, match=r"messages\.2\.content\.0\.content\.0\."):
        await client.messages.create(model="relay", max_tokens=100, messages=_tool_turns(bad))
