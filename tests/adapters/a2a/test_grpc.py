"""gRPC specifics: readiness waits for the port, tenants (0.3 too), defaults, bad input."""

from __future__ import annotations

import socket

import grpc
import grpc.aio
import httpx
import pytest
from a2a.client import A2AClientError, ClientCallContext
from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_transport import CompatGrpcTransport
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    a2a_pb2_grpc,
)
from asgi_lifespan import LifespanManager

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from tests.adapters.a2a.support import a2a_settings
from tests.upstream import free_port

pytestmark = pytest.mark.anyio

AGENTS = {"echo": ChatAgent("echo", EchoModel()), "other": ChatAgent("other", EchoModel())}


def hello(text: str, tenant: str = "") -> SendMessageRequest:
    message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message, tenant=tenant)


async def test_ready_only_once_grpc_listens_and_calls_pick_their_agent_by_tenant() -> None:
    port = free_port()
    app = create_app(a2a_settings(a2a_grpc_port=port, a2a_default_agent="other"), AGENTS)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        assert (await http.get("/readyz")).status_code == 503
        async with LifespanManager(app):
            assert (await http.get("/readyz")).status_code == 200
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
                echo = await stub.SendMessage(hello("to echo", tenant="echo"))
                assert echo.task.artifacts[0].parts[0].text == "to echo"
                default = await stub.SendMessage(hello("to the default"))
                assert default.task.artifacts[0].parts[0].text == "to the default"
                # The task belongs to the agent that ran it.
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.GetTask(GetTaskRequest(id=default.task.id, tenant="echo"))
                assert caught.value.code() == grpc.StatusCode.NOT_FOUND
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.SendMessage(hello("anyone?", tenant="nobody"))
                assert caught.value.code() == grpc.StatusCode.NOT_FOUND
                assert "nobody" in (caught.value.details() or "")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.SendMessage(SendMessageRequest(tenant="echo"))
                assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.SendMessage(
                        hello("from the future"), metadata=[("a2a-version", "9.0")]
                    )
                assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
                assert "9.0" in (caught.value.details() or "")
                # The 0.3 service, which has no tenant, reaches the default agent.
                old = a2a_v0_3_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
                message = a2a_v0_3_pb2.Message(
                    message_id="m-03",
                    role=a2a_v0_3_pb2.ROLE_USER,
                    content=[a2a_v0_3_pb2.Part(text="hello 0.3")],
                )
                answer = await old.SendMessage(a2a_v0_3_pb2.SendMessageRequest(request=message))
                assert answer.task.artifacts[0].parts[0].text == "hello 0.3"
        # Stopped with the app.
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0


async def test_a_taken_grpc_port_stops_start_up() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        app = create_app(a2a_settings(a2a_grpc_port=port), AGENTS)
        with pytest.raises(RuntimeError):
            async with LifespanManager(app):
                pass
        assert app.state.ready is False


async def test_malformed_protobufs_get_invalid_argument_and_x_api_key_works() -> None:
    from tests.principals import KEYS, keyed_settings

    port = free_port()
    settings = keyed_settings(adapters=["openai", "a2a"], a2a_grpc_port=port)
    app = create_app(settings, AGENTS)
    async with LifespanManager(app), grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        key = [("x-api-key", KEYS["alice"])]
        raw = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
        for garbage in (b"\xff\xff\xff", b"\x0a" * 3, b"\x0a\x05ab"):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw(garbage, metadata=key)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
        stream = channel.unary_stream("/lf.a2a.v1.A2AService/SendStreamingMessage")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in stream(b"\xff\xff\xff", metadata=key):
                pass
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        answer = await stub.SendMessage(hello("keyed", tenant="echo"), metadata=key)
        assert answer.task.artifacts[0].parts[0].text == "keyed"
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.SendMessage(hello("no key", tenant="echo"))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_the_0_3_grpc_interface_reaches_every_agent_by_its_tenant_metadata() -> None:
    port = free_port()
    app = create_app(a2a_settings(a2a_grpc_port=port), AGENTS)  # two agents, no default
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            cards = {
                name: (await http.get(f"/a2a/{name}/.well-known/agent-card.json")).json()
                for name in AGENTS
            }
        for card in cards.values():
            legacy = [
                i
                for i in card["supportedInterfaces"]
                if i["protocolBinding"] == "GRPC" and i["protocolVersion"] == "0.3"
            ]
            assert legacy, "the card lists no 0.3 gRPC interface"
        # The SDK's own 0.3 gRPC client, naming the agent as the docs say.
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = CompatGrpcTransport(channel, None)
            for name in AGENTS:
                context = ClientCallContext(service_parameters={"a2a-tenant": name})
                blocking = hello(f"to {name}")
                blocking.configuration.CopyFrom(SendMessageConfiguration())  # 0.3: blocking
                answer = await client.send_message(blocking, context=context)
                assert answer.task.artifacts[0].parts[0].text == f"to {name}"
                # The task is that agent's: the 1.0 service finds it under its tenant.
                stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
                got = await stub.GetTask(GetTaskRequest(id=answer.task.id, tenant=name))
                assert got.id == answer.task.id
            with pytest.raises(A2AClientError, match="a2a-tenant"):
                await client.send_message(hello("to whom?"))
