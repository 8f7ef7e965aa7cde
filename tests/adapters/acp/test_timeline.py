"""A session's timeline (``adapters/acp/timeline.py``) on Redis: the order of its runs,
and a timeline stored before (a copy of every message) read and continued."""

from __future__ import annotations

import uuid

import httpx
import pytest
from asgi_lifespan import LifespanManager

from agenthost.adapters.acp.timeline import timeline_key
from agenthost.agents import ChatAgent, Message, SessionKey
from agenthost.agents.models import EchoModel, FunctionModel
from agenthost.agents.sessions import ANONYMOUS
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from agenthost.app.server import create_app
from tests.adapters.acp.clients import acp_settings
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


def counting() -> FunctionModel:
    return FunctionModel(lambda request: f"t heard {len(request.messages)}")


async def _history(http: httpx.AsyncClient, session: str) -> list[tuple[str, str]]:
    read = await http.get(f"/acp/sessions/{session}")
    assert read.status_code == 200, read.text
    messages = [(await http.get(url)).json() for url in read.json()["history"]]
    return [(m["role"], m["parts"][0]["content"]) for m in messages]


async def test_runs_read_back_in_order_after_a_timeline_stored_before(
    redis: RedisServer,  # noqa: F811
) -> None:
    agents = {"t": ChatAgent("t", counting()), "echo": ChatAgent("echo", EchoModel())}
    memory = RedisMemoryManager(redis_client(redis.url, timeout=2), "acp", ttl=60)
    session = str(uuid.uuid4())
    # What the layout before kept of a run to t: its messages, and a named copy of each.
    before = [Message.user("zero"), Message.assistant("t heard 1")]
    await memory.append(SessionKey("t", session, ANONYMOUS), before)
    named = [m.model_copy(update={"name": "t"}) for m in before]
    await memory.append(timeline_key(session, ANONYMOUS), named)

    app = create_app(acp_settings(session_store=redis.url), agents)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            for text, agent in [("one", "echo"), ("two", "t"), ("three", "echo")]:
                run = {
                    "agent_name": agent,
                    "session_id": session,
                    "mode": "sync",
                    "input": [{"role": "user", "parts": [{"content": text}]}],
                }
                done = await http.post("/acp/runs", json=run)
                assert done.json()["status"] == "completed", done.text
            assert await _history(http, session) == [
                ("user", "zero"),
                ("agent/t", "t heard 1"),
                ("user", "one"),
                ("agent/echo", "one"),
                ("user", "two"),
                ("agent/t", "t heard 3"),  # it saw its own earlier run only
                ("user", "three"),
                ("agent/echo", "three"),
            ]
            stored = await memory.get(timeline_key(session, ANONYMOUS))
            assert stored is not None and len(stored.messages) == 2  # no copies added
            assert sorted(stored.meta.values()) == ["2:echo", "2:echo", "2:t"]
    await memory.aclose()
