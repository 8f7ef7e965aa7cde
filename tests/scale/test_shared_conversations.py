"""One conversation on every protocol (issue 25), with each protocol's own client.

Two replicas of ``agenthost serve`` share one real Redis, with
``AGENTHOST_SESSIONS=shared``; ``agenthost acp-stdio`` (Zed's protocol) runs
on the same store as alice. A conversation is started on one surface (on
replica 0) and continued on another (on replica 1): the fake upstream model
must be sent the whole history, in order; the Conversations API lists each
turn once; the store records each turn's protocol. Another key sees
nothing; an agent with ``sessions: isolated`` and another agent share no
conversation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.core import ClientSideConnection
from acp.schema import AgentMessageChunk, ClientCapabilities, Implementation, TextContentBlock
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import Session
from mcp import Client as MCPClient
from mcp.client.streamable_http import streamable_http_client

from agenthost.agents import SessionKey
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from agenthost.app.shared_sessions import conversation_uuid
from tests.commands import wait_ready
from tests.scale.test_replicas import Replica
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).parents[2]
MODEL = (
    "model: openai:gpt\n    model_settings: "
    '{base_url: "${UPSTREAM_URL}", api_key: x, max_retries: 0}\n'
)
CONFIG = (
    f"agents:\n  - name: chat\n    {MODEL}"
    f"  - name: other\n    {MODEL}"
    f"  - name: apart\n    sessions: isolated\n    {MODEL}"
)
KEYS = {"alice": "alice-key-0123456789", "bob": "bob-key-0123456789abc"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as url:
        yield fake, f"{url}/v1"


@pytest.fixture(scope="module")
def env(upstream: tuple[FakeUpstream, str], redis: RedisServer) -> dict[str, str]:  # noqa: F811
    return {
        "AGENTHOST_SESSIONS": "shared",
        "AGENTHOST_SESSION_STORE": redis.url,
        "AGENTHOST_API_KEYS": ",".join(f"{n}:{k}" for n, k in KEYS.items()),
        "UPSTREAM_URL": upstream[1],
    }


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Iterator[list[Replica]]:
    folder = tmp_path_factory.mktemp("shared")
    settings = {"AGENTHOST_ADAPTERS": "openai,a2a,mcp,acp", "AGENTHOST_A2A_GRPC_PORT": "0", **env}
    with ExitStack() as stack:
        started = []
        for index in range(2):
            (folder / str(index)).mkdir()
            replica = Replica(folder / str(index), settings)
            replica.config.write_text(CONFIG)
            stack.callback(replica.kill)
            started.append(replica)
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(_start, started))
        yield started


def _start(replica: Replica) -> None:
    """``Replica.start`` with a longer wait: a loaded machine takes minutes to import."""
    command = [sys.executable, "-P", "-m", "agenthost.app", "serve"]
    command += ["--config", str(replica.config), "--port", str(replica.port)]
    replica.process = subprocess.Popen(command, env={**os.environ, **replica.env}, cwd=ROOT)
    wait_ready(replica.process, replica.url, timeout=600)


class Recorder:
    """Zed's client side: the agent's text of each session."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.texts[session_id] = self.texts.get(session_id, "") + update.content.text


@pytest.fixture(scope="module")
async def zed(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]
) -> AsyncIterator[tuple[ClientSideConnection, Recorder]]:
    config = tmp_path_factory.mktemp("zed") / "agents.yaml"
    config.write_text(CONFIG)
    recorder = Recorder()
    command = ["-P", "-m", "agenthost.app", "acp-stdio", "chat", "--config", str(config)]
    environment = {**os.environ, **env, "AGENTHOST_STDIO_PRINCIPAL": "alice"}
    async with spawn_agent_process(
        recorder,  # type: ignore[arg-type]
        sys.executable,
        *command,
        cwd=ROOT,
        env=environment,
    ) as (conn, _):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="tests", version="1"),
        )
        yield conn, recorder


@dataclass
class Surfaces:
    """Each protocol's client, as one user (``key``) of the agent ``agent``."""

    pair: list[Replica]
    zed: tuple[ClientSideConnection, Recorder]
    key: str = KEYS["alice"]
    agent: str = "chat"

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    async def openai(self, replica: int, text: str, id: str | None) -> tuple[str, str]:
        url = f"{self.pair[replica].url}/v1"
        async with openai.AsyncOpenAI(base_url=url, api_key=self.key, max_retries=0) as client:
            if id is None:
                id = (await client.conversations.create()).id
            answer = await client.responses.create(model=self.agent, input=text, conversation=id)
        return id, answer.output_text

    async def a2a(self, replica: int, text: str, id: str | None) -> tuple[str, str]:
        url = f"{self.pair[replica].url}/a2a/{self.agent}"
        async with httpx.AsyncClient(headers=self._auth(), timeout=60) as http:
            config = ClientConfig(streaming=False, httpx_client=http)
            client = await create_client(url, config)
            message = Message(
                message_id=uuid.uuid4().hex,
                role=Role.ROLE_USER,
                parts=[Part(text=text)],
                context_id=id or "",
            )
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            await client.close()
        task = events[-1].task
        return task.context_id, "".join(p.text for a in task.artifacts for p in a.parts)

    async def mcp(self, replica: int, text: str, id: str | None) -> tuple[str, str]:
        id = id or f"mcp-{uuid.uuid4().hex}"  # MCP clients name their conversations
        url = f"{self.pair[replica].url}/mcp"
        async with (
            httpx2.AsyncClient(headers=self._auth(), timeout=60) as http,
            MCPClient(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool(self.agent, {"message": text, "session_id": id})
        assert not result.is_error, result
        assert isinstance(result.structured_content, dict)
        return id, str(result.structured_content["text"])

    async def acp(self, replica: int, text: str, id: str | None) -> tuple[str, str]:
        session = Session(id=conversation_uuid(id)) if id else Session()
        url = f"{self.pair[replica].url}/acp"
        async with ACPClient(base_url=url, headers=self._auth(), timeout=60) as client:
            run = await client.session(session).run_sync(text, agent=self.agent)
        return id or str(session.id), "".join(str(p.content) for p in run.output[0].parts)

    async def acp_zed(self, replica: int, text: str, id: str | None) -> tuple[str, str]:
        conn, recorder = self.zed
        if id is None:
            id = (await conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id
        else:
            await conn.load_session(cwd=str(ROOT), session_id=id, mcp_servers=[])
        recorder.texts.pop(id, None)  # a load replays the history: keep this turn's text only
        answer = await conn.prompt(session_id=id, prompt=[text_block(text)])
        assert answer.stop_reason == "end_turn"
        return id, recorder.texts.get(id, "")


SURFACES = ["openai", "a2a", "mcp", "acp", "acp_zed"]
Say = Callable[[int, str, str | None], Awaitable[tuple[str, str]]]


def sent(upstream: FakeUpstream, last: str) -> list[tuple[str, str]]:
    """The conversation the upstream was sent with the user text ``last`` at its end."""
    for body in reversed(upstream.requests):
        # Streamed answers end with a space (the fake streams word by word).
        messages = [(m["role"], (m.get("content") or "").strip()) for m in body["messages"]]
        if messages and messages[-1] == ("user", last):
            return [(r, c) for r, c in messages if r in ("user", "assistant")]
    raise AssertionError(f"the upstream was never sent {last!r}")


async def protocols(redis_url: str, agent: str, id: str, principal: str = "alice") -> list[str]:
    store = RedisMemoryManager(redis_client(redis_url, timeout=5), "conversations", ttl=60)
    try:
        conversation = await store.get(SessionKey(agent, id, principal))
    finally:
        await store.aclose()
    assert conversation is not None
    return [(m.metadata or {}).get("protocol", "?") for m in conversation.messages]


@pytest.mark.parametrize("later", SURFACES)
@pytest.mark.parametrize("first", SURFACES)
async def test_a_conversation_started_on_one_protocol_continues_on_another(
    first: str,
    later: str,
    pair: list[Replica],
    zed: tuple[ClientSideConnection, Recorder],
    upstream: tuple[FakeUpstream, str],
    redis: RedisServer,  # noqa: F811
) -> None:
    surfaces = Surfaces(pair, zed)
    tag = uuid.uuid4().hex[:8]
    start: Say = getattr(surfaces, first)
    go_on: Say = getattr(surfaces, later)
    id, reply = await start(0, f"one {tag}", None)
    assert reply.strip() == f"upstream says: one {tag}"
    same, reply = await go_on(1, f"two {tag}", id)
    assert same == id and reply.strip() == f"upstream says: two {tag}"
    assert sent(upstream[0], f"two {tag}") == [
        ("user", f"one {tag}"),
        ("assistant", f"upstream says: one {tag}"),
        ("user", f"two {tag}"),
    ]
    # Each turn once, in order, with the protocol that wrote it.
    assert await protocols(redis.url, "chat", id) == [first, first, later, later]
    url = f"{pair[1].url}/v1"
    async with openai.AsyncOpenAI(base_url=url, api_key=KEYS["alice"], max_retries=0) as client:
        items = await client.conversations.items.list(id, order="asc")
    texts = [item.content[0].text.strip() for item in items.data]  # type: ignore[union-attr]
    assert texts == [f"one {tag}", f"upstream says: one {tag}", f"two {tag}", reply.strip()]


@pytest.mark.parametrize("later", ["openai", "a2a", "mcp", "acp"])
async def test_another_key_sees_nothing_of_it_on_any_protocol(
    later: str,
    pair: list[Replica],
    zed: tuple[ClientSideConnection, Recorder],
    upstream: tuple[FakeUpstream, str],
) -> None:
    tag = uuid.uuid4().hex[:8]
    id, _ = await Surfaces(pair, zed).mcp(0, f"secret {tag}", f"s-{tag}")
    bob = Surfaces(pair, zed, key=KEYS["bob"])
    if later == "openai":
        with pytest.raises(openai.NotFoundError):
            await bob.openai(1, f"peek {tag}", id)
        return
    await getattr(bob, later)(1, f"peek {tag}", id)
    assert sent(upstream[0], f"peek {tag}") == [("user", f"peek {tag}")]


@pytest.mark.parametrize(
    ("agent", "later"), [("apart", "a2a"), ("apart", "openai"), ("other", "a2a")]
)
async def test_ids_do_not_cross_when_not_shared_or_across_agents(
    agent: str,
    later: str,
    pair: list[Replica],
    zed: tuple[ClientSideConnection, Recorder],
    upstream: tuple[FakeUpstream, str],
) -> None:
    tag = uuid.uuid4().hex[:8]
    # "chat" (shared) or "apart" (sessions: isolated) starts it over MCP ...
    starter = Surfaces(pair, zed, agent="chat" if agent == "other" else agent)
    id, _ = await starter.mcp(0, f"mine {tag}", f"x-{tag}")
    # ... and the same id elsewhere is another conversation.
    elsewhere = Surfaces(pair, zed, agent=agent)
    if later == "openai":
        with pytest.raises(openai.NotFoundError):
            await elsewhere.openai(1, f"other {tag}", id)
        return
    await getattr(elsewhere, later)(1, f"other {tag}", id)
    assert sent(upstream[0], f"other {tag}") == [("user", f"other {tag}")]


async def test_an_acp_session_of_another_protocols_conversation_lists_it_whole(
    pair: list[Replica], zed: tuple[ClientSideConnection, Recorder]
) -> None:
    surfaces = Surfaces(pair, zed)
    tag = uuid.uuid4().hex[:8]
    id, _ = await surfaces.openai(0, f"hello {tag}", None)
    await surfaces.acp(1, f"again {tag}", id)
    session = conversation_uuid(id)
    async with httpx.AsyncClient(headers=surfaces._auth(), timeout=30) as http:
        found = (await http.get(f"{pair[0].url}/acp/sessions/{session}")).json()
        assert len(found["history"]) == 4
        last = (await http.get(found["history"][-1])).json()
    assert last["parts"][0]["content"].strip() == f"upstream says: again {tag}"
