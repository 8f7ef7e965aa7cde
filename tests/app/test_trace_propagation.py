"""Trace context in and out of every non-HTTP surface, through the real clients and the
in-test OTLP receiver: gRPC metadata and MCP ``_meta`` in; MCP tool servers (``_meta``)
and A2A push webhooks (a ``traceparent`` header) out. One trace id end to end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import grpc
import grpc.aio
import httpx
import pytest
from a2a.client import ClientCallContext
from a2a.types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
    a2a_pb2_grpc,
)
from asgi_lifespan import LifespanManager
from mcp.server.mcpserver import Context, MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools.mcp import HTTPServer, MCPConnection, MCPServers, MCPToolset
from agenthost.app.server import create_app
from tests.adapters.a2a.support import a2a_settings, sdk_client
from tests.adapters.mcp.helpers import mcp_client
from tests.otlp import PARENT_ID, TRACE_ID, TRACEPARENT, Receiver, receiving
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MCP_TRACE = "0af7651916cd43dd8448eb211c80319c"
MCP_PARENT = "b7ad6b7169203331"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    yield from receiving(monkeypatch)


class Seen:
    """What the tool server's tool and the webhook received."""

    def __init__(self) -> None:
        self.tool_meta: list[dict[str, Any]] = []
        self.hook_traceparents: list[str | None] = []
        self.hooked = anyio.Event()


@pytest.fixture
def seen() -> Iterator[tuple[Seen, str, str]]:
    """(what was seen, the tool server's MCP URL, the webhook's URL), both served."""
    record = Seen()
    tools = MCPServer("traced-tools")

    @tools.tool()
    def shout(text: str, ctx: Context) -> str:
        """Upper-case a text."""
        record.tool_meta.append(dict(ctx.request_context.meta or {}))
        return text.upper()

    async def hook(request: Request) -> Response:
        record.hook_traceparents.append(request.headers.get("traceparent"))
        return Response(status_code=204)

    webhook = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    tool_app = tools.streamable_http_app(stateless_http=True, json_response=True)
    with (
        serve_in_thread(tool_app, lifespan=True) as tools_url,
        serve_in_thread(webhook) as hook_url,
    ):
        yield record, f"{tools_url}/mcp", f"{hook_url}/hook"


def _message(text: str, context_id: str) -> Message:
    return Message(
        message_id="m-1", role=Role.ROLE_USER, parts=[Part(text=text)], context_id=context_id
    )


async def test_grpc_and_mcp_carry_the_callers_trace_in_and_out(
    receiver: Receiver, seen: tuple[Seen, str, str]
) -> None:
    record, tools_url, hook_url = seen
    connection = MCPConnection("traced", HTTPServer(tools_url))
    toolset = MCPToolset(connection)
    async with MCPServers([connection]).lifespan():
        tooled = ChatAgent(
            "tooled",
            ScriptedModel([call("shout", '{"text": "hi"}'), "shouted"]),
            tools=toolset.tools(),
        )
        agents = {"echo": ChatAgent("echo", EchoModel()), "tooled": tooled}
        port_settings = a2a_settings(adapters=["a2a", "mcp"])
        app = create_app(port_settings, agents)
        async with LifespanManager(app) as manager:
            # A2A over gRPC, the trace in the call's metadata; updates pushed to a webhook.
            request = SendMessageRequest(message=_message("over grpc", "ctx-grpc"), tenant="echo")
            request.configuration.CopyFrom(
                SendMessageConfiguration(
                    task_push_notification_config=TaskPushNotificationConfig(url=hook_url)
                )
            )
            target = f"127.0.0.1:{port_settings.protocol('a2a').grpc_port}"
            async with grpc.aio.insecure_channel(target) as channel:
                stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
                answer = await stub.SendMessage(request, metadata=[("traceparent", TRACEPARENT)])
            # The a2a-sdk client over gRPC: service parameters become call metadata.
            transport = httpx.ASGITransport(app=manager.app)
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://localhost") as http,
                await sdk_client("http://localhost/a2a/echo", "GRPC", http=http) as client,
            ):
                traced = ClientCallContext(service_parameters={"traceparent": TRACEPARENT})
                streamed = SendMessageRequest(message=_message("streamed", "ctx-s"))
                assert [event async for event in client.send_message(streamed, context=traced)]
            assert answer.task.artifacts[0].parts[0].text == "over grpc"
            # MCP: the trace in the request's _meta (as MCP clients send it); the agent's
            # tool server gets it in its own _meta.
            mcp_traceparent = f"00-{MCP_TRACE}-{MCP_PARENT}-01"
            async with mcp_client(manager.app) as mcp:
                result = await mcp.call_tool(
                    "tooled", {"message": "shout hi"}, meta={"traceparent": mcp_traceparent}
                )
            assert not result.is_error
            for _ in range(200):  # the push goes out after the answer
                if record.hook_traceparents:
                    break
                await anyio.sleep(0.02)
    # The app's shutdown flushed every span.
    (grpc_span,) = receiver.named("lf.a2a.v1.A2AService/SendMessage")
    assert (grpc_span.trace_id, grpc_span.parent_id, grpc_span.kind) == (TRACE_ID, PARENT_ID, 2)
    assert grpc_span.attributes["rpc.system"] == "grpc"
    (stream_span,) = receiver.named("lf.a2a.v1.A2AService/SendStreamingMessage")
    assert (stream_span.trace_id, stream_span.parent_id) == (TRACE_ID, PARENT_ID)
    runs = {
        run.attributes["gen_ai.conversation.id"]: run for run in receiver.named("invoke_agent echo")
    }
    assert runs.keys() == {"ctx-grpc", "ctx-s"}
    assert runs["ctx-grpc"].trace_id == TRACE_ID and runs["ctx-grpc"].parent_id == grpc_span.span_id
    assert runs["ctx-s"].parent_id == stream_span.span_id
    assert record.hook_traceparents, "no push reached the webhook"
    assert {tp.split("-")[1] for tp in record.hook_traceparents if tp} == {TRACE_ID}
    assert None not in record.hook_traceparents

    (mcp_span,) = receiver.named("tools/call tooled")
    assert (mcp_span.trace_id, mcp_span.parent_id, mcp_span.kind) == (MCP_TRACE, MCP_PARENT, 2)
    (tool_run,) = receiver.named("invoke_agent tooled")
    assert tool_run.trace_id == MCP_TRACE and tool_run.parent_id == mcp_span.span_id
    (shouted,) = receiver.named("execute_tool shout")
    assert shouted.parent_id == tool_run.span_id
    (meta,) = record.tool_meta
    assert meta["traceparent"].split("-")[1] == MCP_TRACE
    assert meta["traceparent"].split("-")[2] == tool_run.span_id
