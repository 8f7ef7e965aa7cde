"""Traces through a real OTLP/HTTP receiver: span names, nesting, GenAI attributes and
one trace id from the client's ``traceparent`` to the upstream's."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest
from acp_sdk.client import Client as ACPClient
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.app.conftest import Lines
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    failed: bool


def _value(value: AnyValue) -> Any:
    field = value.WhichOneof("value")
    if field == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, field) if field else None


class Receiver:
    """An OTLP/HTTP trace receiver: decodes each export's protobuf into :class:`Span`."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.services: set[str] = set()
        self.app = Starlette(routes=[Route("/v1/traces", self.export, methods=["POST"])])

    async def export(self, request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest.FromString(body)
        for resource in export.resource_spans:
            for attribute in resource.resource.attributes:
                if attribute.key == "service.name":
                    self.services.add(_value(attribute.value))
            for scope in resource.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        Span(
                            span.name,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.kind,
                            {a.key: _value(a.value) for a in span.attributes},
                            span.status.code == 2,
                        )
                    )
        return Response(b"", media_type="application/x-protobuf")

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    receiver = Receiver()
    with serve_in_thread(receiver.app) as url:
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "agenthost-test")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        yield receiver


async def test_one_trace_from_the_client_through_the_agent_to_the_upstream(
    receiver: Receiver, upstream: tuple[FakeUpstream, str], json_lines: Lines
) -> None:
    fake, base_url = upstream
    agents = {
        "calc": ChatAgent(
            "calc", OpenAIModel("fine", base_url=base_url, api_key="k"), tools=(calculator,)
        ),
        "echo": ChatAgent("echo", EchoModel()),
    }
    seen = len(fake.traceparents)
    app = create_app(Settings(adapters=["openai", "acp"]), agents)
    with serve_in_thread(app, lifespan=True) as url:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        async with client:
            answer = await client.chat.completions.create(
                model="calc",
                messages=[{"role": "user", "content": "calculate 6*7"}],
                extra_headers={"traceparent": TRACEPARENT},
            )
        assert "42" in (answer.choices[0].message.content or "")
        async with ACPClient(base_url=f"{url}/acp", headers={"traceparent": TRACEPARENT}) as acp:
            run = await acp.run_sync("over acp", agent="echo")
            assert run.status == "completed"
    # The host's shutdown flushed every span.
    assert receiver.services == {"agenthost-test"}
    spans = receiver.spans
    assert {span.trace_id for span in spans} == {TRACE_ID}, [s.name for s in spans]
    (server,) = [s for s in spans if s.name == "POST /v1/chat/completions"]
    assert server.parent_id == PARENT_ID and server.kind == 2  # SERVER
    assert server.attributes["http.response.status_code"] == 200
    (run_span,) = [s for s in receiver.named("invoke_agent calc")]
    assert run_span.parent_id == server.span_id
    assert run_span.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run_span.attributes["gen_ai.agent.name"] == "calc"
    assert run_span.attributes["gen_ai.usage.output_tokens"] > 0
    chats = receiver.named("chat fine")
    assert len(chats) == 2  # asks for the tool, then answers with its result
    for chat in chats:
        assert chat.parent_id == run_span.span_id and chat.kind == 3  # CLIENT
        assert chat.attributes["gen_ai.request.model"] == "fine"
        assert chat.attributes["gen_ai.usage.input_tokens"] > 0
        assert "gen_ai.input.messages" not in chat.attributes  # contents are off by default
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [
        ["tool_calls"],
        ["stop"],
    ]
    (tool,) = receiver.named("execute_tool calculator")
    assert tool.parent_id == run_span.span_id and not tool.failed
    # The tool's log line names the trace, and the run's span it was written in.
    lines = [json.loads(line) for line in json_lines.lines]
    (logged,) = [line for line in lines if line["logger"] == "agenthost.agents.tools"]
    assert logged["trace_id"] == TRACE_ID and logged["span_id"] == run_span.span_id
    assert tool.attributes["gen_ai.tool.name"] == "calculator"
    # The upstream got the trace: each request's parent is its chat span.
    received = fake.traceparents[seen:]
    assert [tp.split("-")[1] for tp in received if tp] == [TRACE_ID, TRACE_ID]
    assert {tp.split("-")[2] for tp in received if tp} == {chat.span_id for chat in chats}
    # IBM ACP: the run's span under that request's server span.
    (acp_server,) = [s for s in spans if s.name == "POST /acp/runs"]
    (echo_span,) = receiver.named("invoke_agent echo")
    assert acp_server.parent_id == PARENT_ID and echo_span.parent_id == acp_server.span_id


async def test_message_contents_only_when_asked(
    receiver: Receiver, upstream: tuple[FakeUpstream, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    agents = {"up": ChatAgent("up", OpenAIModel("fine", base_url=upstream[1], api_key="k"))}
    with serve_in_thread(create_app(Settings(adapters=["openai"]), agents), lifespan=True) as url:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused") as client:
            stream = await client.chat.completions.create(
                model="up", messages=[{"role": "user", "content": "a secret"}], stream=True
            )
            [chunk async for chunk in stream]
    (chat,) = receiver.named("chat fine")
    assert "a secret" in chat.attributes["gen_ai.input.messages"]
    assert "a secret" in chat.attributes["gen_ai.output.messages"]


async def test_tracing_is_off_without_the_variables() -> None:
    app = create_app(Settings(adapters=["openai"]), {"echo": ChatAgent("echo", EchoModel())})
    assert app.state.host.tracing is None
