"""Traces through a real OTLP/HTTP receiver: span names, nesting, GenAI attributes and
one trace id from the client's ``traceparent`` to the upstream's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import Session

from agenthost.agents import ChatAgent, ModelSettings
from agenthost.agents.hosting import Hosting
from agenthost.agents.models import EchoModel
from agenthost.agents.models.local import LocalModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.tools import calculator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.app.conftest import Lines
from tests.otlp import PARENT_ID, TRACE_ID, TRACEPARENT, Receiver, receiving, receiving_grpc
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    yield from receiving(monkeypatch)


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


async def test_probes_make_no_spans(receiver: Receiver) -> None:
    app = create_app(Settings(adapters=["openai"]), {"echo": ChatAgent("echo", EchoModel())})
    with serve_in_thread(app, lifespan=True) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            for path in ("/healthz", "/readyz", "/v1/models"):
                assert (await http.get(path)).status_code == 200
    # A probe every few seconds per replica would be most of the traces, and tell nothing.
    assert [span.name for span in receiver.spans] == ["GET /v1/models"]


async def test_tracing_is_off_without_the_variables() -> None:
    app = create_app(Settings(adapters=["openai"]), {"echo": ChatAgent("echo", EchoModel())})
    assert app.state.host.tracing is None


@pytest.mark.slow
async def test_the_embedded_model_has_chat_spans_and_runs_name_their_conversation(
    receiver: Receiver,
) -> None:
    settings = ModelSettings(max_tokens=8, temperature=0, seed=7)
    agents = {"local": ChatAgent("local", LocalModel("smollm2"), model_settings=settings)}
    with serve_in_thread(create_app(Settings(adapters=["acp"]), agents), lifespan=True) as url:
        conversation = Session()
        async with ACPClient(base_url=f"{url}/acp") as acp, acp.session(conversation) as session:
            run = await session.run_sync("Say hello.", agent="local")
            assert run.status == "completed"
    (chat,) = receiver.named("chat smollm2")
    (run_span,) = receiver.named("invoke_agent local")
    assert chat.parent_id == run_span.span_id and chat.kind == 3  # CLIENT
    assert chat.attributes["gen_ai.request.model"] == "smollm2"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    assert 0 < chat.attributes["gen_ai.usage.output_tokens"] <= 8
    assert chat.attributes["gen_ai.response.finish_reasons"] in (["stop"], ["length"])
    # The IBM ACP session is the run's conversation.
    assert run_span.attributes["gen_ai.conversation.id"] == str(conversation.id)


@pytest.fixture
def grpc_receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    yield from receiving_grpc(monkeypatch)


async def test_spans_go_over_otlp_grpc_when_asked(grpc_receiver: Receiver) -> None:
    app = create_app(Settings(adapters=["openai"]), {"echo": ChatAgent("echo", EchoModel())})
    with serve_in_thread(app, lifespan=True) as url:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused") as client:
            await client.chat.completions.create(
                model="echo",
                messages=[{"role": "user", "content": "over grpc"}],
                extra_headers={"traceparent": TRACEPARENT},
            )
    assert grpc_receiver.services == {"agenthost-grpc"}
    (run_span,) = grpc_receiver.named("invoke_agent echo")
    (server,) = grpc_receiver.named("POST /v1/chat/completions")
    assert run_span.trace_id == server.trace_id == TRACE_ID
    assert run_span.parent_id == server.span_id and server.parent_id == PARENT_ID


async def test_traces_and_metrics_are_composed_when_made_not_by_attach_order() -> None:
    from agenthost.app.metrics import Metrics, ToolMetrics
    from agenthost.app.tracing import Tracing

    metrics = Metrics(["a"])
    tracing = Tracing({})
    observer = tracing.observer(metrics)
    hooks = observer.tool_hooks("a")
    assert [type(h).__name__ for h in hooks] == ["ToolMetrics", "_ToolSpans"]
    assert isinstance(hooks[0], ToolMetrics)
    upstream = observer.upstream_observer("a")
    assert upstream is not None
    upstream.upstream_request("ok")
    assert (
        metrics.registry.get_sample_value(
            "agenthost_upstream_requests_total", {"agent": "a", "outcome": "ok"}
        )
        == 1
    )
    agent = ChatAgent("a", EchoModel(), hosting=Hosting(observer=observer))
    assert len(agent.tool_hooks) == 3 and agent.upstream is not None
    tracing.shutdown()
