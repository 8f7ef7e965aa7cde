"""The Conversations API over conversations every protocol shares (in-process store).

The app runs in-process with ``sessions=shared``; MCP, A2A and IBM ACP
write turns with their own SDK clients, the openai SDK reads and edits the
same conversation. The two-replica matrix over Redis is in
tests/scale/test_shared_conversations.py.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import openai
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import Session
from asgi_lifespan import LifespanManager
from mcp import Client as MCPClient
from mcp.client.streamable_http import streamable_http_client

from agenthost.agents import ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from agenthost.app.shared_sessions import conversation_uuid

pytestmark = pytest.mark.anyio


def _transcript(request: ModelRequest) -> str:
    """What the model saw: every user and assistant text, joined."""
    return " | ".join(m.text for m in request.messages if m.role in ("user", "assistant"))


@pytest.fixture
async def app() -> AsyncIterator[Any]:
    agents = {name: ChatAgent(name, FunctionModel(_transcript)) for name in ("chat", "other")}
    settings = Settings(
        sessions="shared", adapters=["openai", "a2a", "mcp", "acp"], a2a_grpc_port=0
    )
    application = create_app(settings, agents)
    async with LifespanManager(application) as manager:
        yield manager.app


async def _mcp(app: Any, agent: str, text: str, id: str) -> str:
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), timeout=30) as http,
        MCPClient(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        result = await client.call_tool(agent, {"message": text, "session_id": id})
    assert isinstance(result.structured_content, dict)
    return str(result.structured_content["text"])


async def test_a_conversation_from_mcp_a2a_and_acp_reads_and_continues_over_v1(app: Any) -> None:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")
    client = openai.AsyncOpenAI(base_url="http://localhost/v1", api_key="x", http_client=http)
    assert await _mcp(app, "chat", "one", "trip-1") == "one"
    items = await client.conversations.items.list("trip-1", order="asc")
    assert [i.content[0].text for i in items.data] == ["one", "one"]  # type: ignore[union-attr]
    answer = await client.responses.create(model="chat", input="two", conversation="trip-1")
    assert answer.output_text == "one | one | two"
    a2a = await create_client(
        "http://localhost/a2a/chat", ClientConfig(streaming=False, httpx_client=http)
    )
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text="three")],
        context_id="trip-1",
    )
    events = [e async for e in a2a.send_message(SendMessageRequest(message=message))]
    task = events[-1].task
    assert task.context_id == "trip-1"
    assert task.artifacts[0].parts[0].text == "one | one | two | one | one | two | three"
    transport = httpx.ASGITransport(app=app)
    async with ACPClient(transport=transport, base_url="http://localhost/acp") as acp:
        session = Session(id=conversation_uuid("trip-1"))
        run = await acp.session(session).run_sync("four", agent="chat")
    assert str(run.output[0].parts[0].content).endswith("| three | four")
    items = await client.conversations.items.list("trip-1", order="asc")
    texts = [i.content[0].text for i in items.data]  # type: ignore[union-attr]
    assert texts[0::2] == ["one", "two", "three", "four"]
    listed = (await http.get(f"/acp/sessions/{conversation_uuid('trip-1')}")).json()
    assert len(listed["history"]) == 8
    # It has no resource of its own: shown plain, and an update stores one.
    assert (await client.conversations.retrieve("trip-1")).metadata == {}
    await client.conversations.update("trip-1", metadata={"topic": "travel"})
    assert (await client.conversations.retrieve("trip-1")).metadata == {"topic": "travel"}
    # A streamed response keeps its turn too.
    stream = await client.responses.create(
        model="chat", input="five", conversation="trip-1", stream=True
    )
    kinds = [event.type async for event in stream]
    assert kinds[-1] == "response.completed"
    items = await client.conversations.items.list("trip-1", order="asc", limit=100)
    assert [i.content[0].text for i in items.data][-2] == "five"  # type: ignore[union-attr]
    # Another agent, or an agent's other conversation, is not it.
    assert await _mcp(app, "other", "hi", "trip-1") == "hi"
    await client.close()
    await http.aclose()


async def test_a_v1_conversation_moves_to_its_agent_on_its_first_response(app: Any) -> None:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")
    client = openai.AsyncOpenAI(base_url="http://localhost/v1", api_key="x", http_client=http)
    made = await client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "zero"}], metadata={"k": "v"}
    )
    answer = await client.responses.create(model="chat", input="first", conversation=made.id)
    assert answer.output_text == "zero | first"
    assert await _mcp(app, "chat", "second", made.id) == "zero | first | zero | first | second"
    added = await client.conversations.items.create(
        made.id, items=[{"type": "message", "role": "user", "content": "noted"}]
    )
    items = await client.conversations.items.list(made.id, order="asc")
    texts = [i.content[0].text for i in items.data]  # type: ignore[union-attr]
    assert texts == ["zero", "first", "zero | first", "second", texts[4], "noted"]
    assert items.data[-1].id == added.data[0].id
    await client.conversations.items.delete(items.data[0].id, conversation_id=made.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.delete(items.data[0].id, conversation_id=made.id)
    items = await client.conversations.items.list(made.id, order="asc")
    assert items.data[0].content[0].text == "first"  # type: ignore[union-attr]
    assert (await client.conversations.retrieve(made.id)).metadata == {"k": "v"}
    # It is chat's now: another agent's response in it is a 404.
    with pytest.raises(openai.NotFoundError):
        await client.responses.create(model="other", input="mine?", conversation=made.id)
    await client.conversations.delete(made.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.retrieve(made.id)
    assert await _mcp(app, "chat", "after", made.id) == "after"  # gone on every protocol
    with pytest.raises(openai.NotFoundError) as missing:
        await client.conversations.items.list("never-made")
    assert "AGENTHOST_SESSIONS" not in missing.value.message  # they are shared here
    await client.close()
    await http.aclose()
