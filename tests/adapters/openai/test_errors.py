"""Every /v1 failure in the OpenAI envelope with the right status; client mistakes are 4xx.

One test per defect found by trying the API as clients do (issue 6 and 12).
"""

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from httpx import Response

from agenthost.agents import Agent, ChatAgent, ModelError, TextDelta
from agenthost.agents.models import BaseChatModel, EchoModel, ModelRequest, ModelStreamEvent
from agenthost.agents.models.openai import OpenAIModel
from tests.adapters.openai.clients import openai_client, running
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.anyio

HI = [{"role": "user", "content": "hi"}]


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


def chat(**extra: Any) -> dict[str, Any]:
    return {"model": "echo", "messages": HI, **extra}


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/chat/completions", 405),
        ("PUT", "/v1/responses", 405),
        ("GET", "/v1/no/such/thing", 404),
        ("POST", "/v1/responses/input_tokens", 404),
        ("POST", "/v1/embeddings", 404),
        ("POST", "/v1/completions", 404),
    ],
)
async def test_routing_errors_are_in_the_envelope(method: str, path: str, status: int) -> None:
    async with running(echo()) as (_, client):
        answer = await client.request(method, path, json={})
    assert answer.status_code == status
    error = answer.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/v1/models", "/v1/models/echo"])
async def test_head_works_wherever_get_does(path: str) -> None:
    async with running(echo()) as (_, client):
        answer = await client.head(path)
    assert answer.status_code == 200 and answer.content == b""


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
async def test_a_body_that_is_not_json_is_a_415_before_any_run(content_type: str) -> None:
    ran: list[str] = []

    class Spy(ChatAgent):
        async def run(self, *args: Any, **kwargs: Any) -> Any:
            ran.append("run")
            return await super().run(*args, **kwargs)

    async with running({"echo": Spy("echo", EchoModel())}) as (_, client):
        body = '{"model": "echo", "messages": [{"role": "user", "content": "hi"}]}'
        headers = {"content-type": content_type}
        for path in ("/v1/chat/completions", "/v1/responses", "/v1/conversations"):
            answer = await client.post(path, content=body, headers=headers)
            assert answer.status_code == 415
            assert answer.json()["error"]["code"] == "unsupported_media_type"
        # Not declared at all is refused too (a browser's no-cors fetch of a Blob sends no
        # type, tests/app/test_content_types.py); declared JSON, with a charset, is fine.
        answer = await client.post("/v1/chat/completions", content=body)
        assert answer.status_code == 415
        headers = {"content-type": "application/json; charset=utf-8"}
        answer = await client.post("/v1/chat/completions", content=body, headers=headers)
        assert answer.status_code == 200
    assert ran == ["run"]


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        (chat(max_tokens="10"), "max_tokens", "valid integer"),
        (chat(stream="true"), "stream", "valid boolean"),
        (chat(temperature="0.5"), "temperature", "valid number"),
        (chat(max_tokens=2**31), "max_tokens", "less than or equal"),
        (chat(max_completion_tokens=10**20), "max_completion_tokens", "less than or equal"),
        (chat(seed=10**20), "seed", "less than or equal"),
        (chat(response_format={"type": "bogus"}), "response_format.type", "bogus"),
        (chat(messages=[{"role": "user", "content": 5}]), "messages[0].content", "valid string"),
        (
            chat(messages=[{"role": "user", "content": [{"type": "video", "video": {}}]}]),
            "messages[0].content[0].type",
            "text",
        ),
        ({"model": "echo", "input": 5}, "input", "valid string or a valid array"),
        ({"model": "echo", "input": "x", "max_output_tokens": 2**31}, "max_output_tokens", ""),
    ],
)
async def test_client_mistakes_are_400s_naming_the_field(
    body: dict[str, Any], param: str, says: str
) -> None:
    path = "/v1/responses" if "input" in body else "/v1/chat/completions"
    async with running(echo()) as (_, client):
        answer = await client.post(path, json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == param
    assert says in error["message"]
    assert ".str" not in error["message"] and "list[" not in error["message"]


IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
FILE = {
    "type": "file",
    "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
}


@pytest.mark.parametrize("part", [IMAGE, AUDIO, FILE])
async def test_parts_a_text_only_model_cannot_read_are_refused(part: dict[str, Any]) -> None:
    async with running(echo()) as (_, client):
        body = chat(messages=[{"role": "user", "content": [part]}])
        answer = await client.post("/v1/chat/completions", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "messages"
    assert "text only" in answer.json()["error"]["message"]


async def test_audio_and_file_parts_reach_an_upstream_that_can_read_them(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    async with running({"up": ChatAgent("up", model)}) as (_, client):
        text = {"type": "text", "text": "what is in these?"}
        body = {
            "model": "up",
            "messages": [{"role": "user", "content": [text, IMAGE, AUDIO, FILE]}],
        }
        answer = await client.post("/v1/chat/completions", json=body)
    await model.aclose()
    assert answer.status_code == 200
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in sent] == ["text", "image_url", "input_audio", "file"]
    assert sent[2]["input_audio"] == AUDIO["input_audio"]
    assert sent[3]["file"] == FILE["file"]


async def test_responses_image_and_file_parts_reach_the_upstream(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("gpt-test", base_url=url, api_key="k", max_retries=0)
    content = [
        {"type": "input_text", "text": "what is in these?"},
        {"type": "input_image", "image_url": IMAGE["image_url"]["url"]},
        {"type": "input_file", "file_data": FILE["file"]["file_data"], "filename": "a.pdf"},
    ]
    async with running({"up": ChatAgent("up", model)}) as (_, client):
        body = {"model": "up", "input": [{"role": "user", "content": content}]}
        answer = await client.post("/v1/responses", json=body)
    await model.aclose()
    assert answer.status_code == 200, answer.text
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in sent] == ["text", "image_url", "file"]
    assert sent[2]["file"] == FILE["file"]


async def test_one_client_call_makes_at_most_max_retries_plus_one_upstream_requests(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("busy-briefly", base_url=url, api_key="k", max_retries=2, timeout=5)
    async with openai_client({"busy": ChatAgent("busy", model)}, max_retries=3) as client:
        before = len(fake.requests)
        with pytest.raises(openai.RateLimitError) as limited:
            await client.chat.completions.create(model="busy", messages=HI)  # type: ignore[arg-type]
    await model.aclose()
    assert len(fake.requests) - before == 3, "agenthost's retries only; the SDK added none"
    assert limited.value.response.headers["x-should-retry"] == "false"


async def test_a_retry_after_longer_than_the_time_left_is_passed_on_not_slept(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    model = OpenAIModel("busy", base_url=url, api_key="k", max_retries=2, timeout=5)
    async with openai_client({"busy": ChatAgent("busy", model)}, max_retries=0) as client:
        before, started = len(fake.requests), time.monotonic()
        with pytest.raises(openai.RateLimitError) as limited:
            await client.responses.create(model="busy", input="hi")
    await model.aclose()
    assert time.monotonic() - started < 3 and len(fake.requests) - before == 1
    headers = limited.value.response.headers
    assert headers["retry-after"] == "7" and "x-should-retry" not in headers


async def relay(url: str, upstream_model: str, *, stream: bool, idle: float = 60) -> Response:
    """One Chat Completions request to an agent relaying to ``upstream_model`` of the fake."""
    model = OpenAIModel(upstream_model, base_url=url, api_key="k", max_retries=0, timeout=idle)
    try:
        async with running({"relay": ChatAgent("relay", model)}) as (_, client):
            body = {"model": "relay", "messages": HI, "stream": stream}
            return await client.post("/v1/chat/completions", json=body)
    finally:
        await model.aclose()


def error_event(answer: Response) -> dict[str, Any]:
    """The error a streamed answer (started at once: 200) ended with, before ``[DONE]``."""
    assert answer.status_code == 200, answer.text
    events = [e for e in answer.text.split("\n\n") if e]
    assert events[-1] == "data: [DONE]", events
    error: dict[str, Any] = json.loads(events[-2].removeprefix("data: "))["error"]
    return error


@pytest.mark.parametrize("upstream_model", ["not-json", "bad-sse"])
async def test_a_malformed_upstream_answer_is_a_502_upstream_error(
    upstream: tuple[FakeUpstream, str], upstream_model: str
) -> None:
    stream = upstream_model == "bad-sse"
    answer = await relay(upstream[1], upstream_model, stream=stream)
    error = error_event(answer) if stream else answer.json()["error"]
    assert stream or answer.status_code == 502
    assert error["code"] == "upstream_error" and "malformed" in error["message"]
    assert "127.0.0.1" not in answer.text


async def test_an_upstream_stream_cut_short_reads_as_what_happened(
    upstream: tuple[FakeUpstream, str],
) -> None:
    answer = await relay(upstream[1], "cut", stream=True)
    error = next(e for e in answer.text.split("\n\n") if '"error"' in e)
    assert "upstream_error" in error and "127.0.0.1" not in error
    assert "the upstream's answer was cut short" in error, error


async def test_a_keep_alive_only_upstream_is_bounded_by_its_timeout(
    upstream: tuple[FakeUpstream, str],
) -> None:
    started = time.monotonic()
    answer = await relay(upstream[1], "keepalive", stream=True, idle=0.5)
    assert time.monotonic() - started < 3
    error = error_event(answer)
    assert error["code"] == "upstream_error" and "sent nothing for 0.5 s" in error["message"]


async def test_upstream_errors_never_name_the_upstream_address() -> None:
    model = OpenAIModel("gpt-test", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    async with running({"down": ChatAgent("down", model)}) as (_, client):
        answer = await client.post("/v1/chat/completions", json={"model": "down", "messages": HI})
    await model.aclose()
    assert answer.status_code == 502
    assert "cannot connect to the upstream" in answer.text
    assert "127.0.0.1" not in answer.text and ":9" not in answer.text


async def test_a_streamed_run_that_fails_at_once_reports_it_in_the_stream() -> None:
    def explode(_: Any) -> str:
        raise RuntimeError("boom")

    from agenthost.agents.models import FunctionModel

    agents: dict[str, Agent] = {"x": ChatAgent("x", FunctionModel(explode))}
    async with running(agents) as (_, client):
        chat = await client.post(
            "/v1/chat/completions", json={"model": "x", "messages": HI, "stream": True}
        )
        responses = await client.post(
            "/v1/responses", json={"model": "x", "input": "hi", "stream": True}
        )
    # The stream started when the run was accepted: the failure is its error event.
    assert error_event(chat)["code"] == "internal_error"
    assert responses.status_code == 200
    events = [e for e in responses.text.split("\n\n") if e.startswith("event: ")]
    assert [e.split("\n")[0] for e in events] == [
        "event: response.created",
        "event: response.in_progress",
        "event: error",
        "event: response.failed",
    ]
    error = json.loads(events[2].split("data: ", 1)[1])
    assert error["code"] == error["error"]["code"] == "internal_error"
    assert error["sequence_number"] == 2
    failed = json.loads(events[3].split("data: ", 1)[1])
    assert failed["response"]["error"]["code"] == "server_error"


async def test_httpx_transport_is_checked() -> None:
    """The schema-checking transport really validates (a guard for the guard)."""
    from tests.adapters.openai.openapi import SchemaCheckingTransport, validate

    with pytest.raises(AssertionError, match="not a valid CreateChatCompletionResponse"):
        validate("CreateChatCompletionResponse", {"object": "chat.completion"})
    async with running(echo()) as (_, client):
        assert isinstance(client._transport, SchemaCheckingTransport)
        await client.post("/v1/chat/completions", json=chat())
        assert client._transport.checked == 1


class _FailsMidStream(BaseChatModel):
    """Says one word, then its upstream breaks."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        yield TextDelta("partial ")
        raise ModelError("upstream model 'x' failed: the upstream's answer was cut short")


async def test_a_mid_stream_failure_reads_as_what_happened_and_ends_cleanly() -> None:
    agents: dict[str, Agent] = {"x": ChatAgent("x", _FailsMidStream())}
    async with running(agents) as (_, client):
        chat_stream = await client.post(
            "/v1/chat/completions", json={"model": "x", "messages": HI, "stream": True}
        )
        responses_stream = await client.post(
            "/v1/responses", json={"model": "x", "input": "hi", "stream": True}
        )
    assert chat_stream.status_code == 200
    events = [line for line in chat_stream.text.split("\n\n") if line]
    assert "cut short" in events[-2] and events[-1] == "data: [DONE]"
    assert '"code":"upstream_error"' in events[-2]
    assert "event: error" in responses_stream.text
    assert responses_stream.text.rstrip().split("\n")[-2] == "event: response.failed"
