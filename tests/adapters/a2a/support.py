"""What the A2A tests share: the app with A2A on, SDK clients, paced models."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager

import grpc.aio
import httpx
from a2a.client import (
    AuthInterceptor,
    Client,
    ClientCallInterceptor,
    ClientConfig,
    CredentialService,
    create_client,
)
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, Task
from asgi_lifespan import LifespanManager

from agenthost.agents import Agent, ChatAgent, TextDelta
from agenthost.agents import Message as AgentMessage
from agenthost.agents.models import ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelResponse, ModelStreamEvent
from agenthost.agents.results import Usage
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.upstream import free_port, serve_in_thread

TRANSPORTS = ["JSONRPC", "HTTP+JSON", "GRPC"]
V1 = {"A2A-Version": "1.0"}


def rpc(method: str, params: object, id: int = 1) -> dict[str, object]:
    """A JSON-RPC request body."""
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def a2a_settings(**overrides: object) -> Settings:
    """Settings serving /v1 and /a2a (gRPC on a free port unless told otherwise)."""
    values: dict[str, object] = {
        "adapters": ["openai", "a2a"],
        "a2a_grpc_port": free_port(),
        "a2a_push_private_networks": True,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@asynccontextmanager
async def in_process(
    agents: Mapping[str, Agent],
    settings: Settings | None = None,
    allow: Mapping[str, frozenset[str]] | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """The app in-process (its gRPC server on a real port); an httpx client bound to it."""
    app = create_app(settings or a2a_settings(), agents, allow=allow)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            yield http


@contextmanager
def served(agents: Mapping[str, Agent], settings: Settings | None = None) -> Iterator[str]:
    """The app under uvicorn on 127.0.0.1 (as ``agenthost serve`` runs it); its base URL."""
    with serve_in_thread(create_app(settings or a2a_settings(), agents), lifespan=True) as url:
        yield url


class StaticKey(CredentialService):
    """One API key for every scheme the card asks for."""

    def __init__(self, key: str) -> None:
        self.key = key

    async def get_credentials(self, security_scheme_name: str, context: object) -> str | None:
        return self.key


async def sdk_client(
    url: str,
    transport: str,
    *,
    http: httpx.AsyncClient | None = None,
    streaming: bool = True,
    key: str | None = None,
) -> Client:
    """The a2a-sdk client for the agent at ``url`` over ``transport`` (card discovery)."""
    config = ClientConfig(
        streaming=streaming,
        httpx_client=http,
        grpc_channel_factory=grpc.aio.insecure_channel,
        supported_protocol_bindings=[transport],
        use_client_preference=True,
    )
    interceptors: list[ClientCallInterceptor] = [AuthInterceptor(StaticKey(key))] if key else []
    return await create_client(url, config, interceptors=interceptors)


def user_message(
    text: str, *, context_id: str = "", task_id: str = "", message_id: str = "m-1"
) -> SendMessageRequest:
    message = Message(
        message_id=message_id,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        context_id=context_id,
        task_id=task_id,
    )
    return SendMessageRequest(message=message)


async def collect(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return [event async for event in client.send_message(request)]


def final_task(events: list[StreamResponse]) -> Task:
    """The task as the last event leaves it (the SDK client aggregates)."""
    for event in reversed(events):
        if event.HasField("task"):
            return event.task
    raise AssertionError(f"no task in {events}")


def artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


class PacedModel(BaseChatModel):
    """Streams ``words`` one every ``delay`` seconds (a model that takes its time)."""

    def __init__(self, words: list[str], delay: float) -> None:
        self.name = "paced"
        self.words, self.delay = words, delay

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        for word in self.words:
            await asyncio.sleep(self.delay)
            yield TextDelta(word)
        text = "".join(self.words)
        yield ModelResponse(AgentMessage.assistant(text), Usage(requests=1))


def paced_agent(name: str = "paced", words: int = 12, delay: float = 0.06) -> ChatAgent:
    return ChatAgent(name, PacedModel([f"w{i} " for i in range(words)], delay))
