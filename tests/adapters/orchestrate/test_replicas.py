"""A thread goes on across two replicas sharing a real Redis, still one principal's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.app.settings import Settings
from tests.adapters.orchestrate.clients import api_key, complete, stream, user
from tests.adapters.orchestrate.spec import text_of
from tests.conftest import running
from tests.principals import KEYS, SECRET, transcript_model
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def replicas(redis: RedisServer) -> AsyncIterator[list[httpx.AsyncClient]]:  # noqa: F811
    settings = Settings(
        adapters=["orchestrate"],  # type: ignore[list-item]
        api_keys=[f"{n}:{k}" for n, k in KEYS.items()],
        session_store=redis.url,
    )
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(2):  # two apps, each with its own agents, as two processes
            agents: dict[str, Agent] = {"t": ChatAgent("t", transcript_model())}
            _, http = await stack.enter_async_context(running(agents, settings))
            clients.append(http)
        yield clients


async def test_the_second_turn_on_another_replica_sees_the_first(
    replicas: list[httpx.AsyncClient],
) -> None:
    one, two = replicas
    thread = str(uuid.uuid4())
    first = await stream(one, "t", [user(SECRET)], thread=thread, headers=api_key("alice"))
    transcript = [user(SECRET), {"role": "assistant", "content": text_of(first)}]
    second = await complete(
        two, "t", [*transcript, user("and now?")], thread=thread, headers=api_key("alice")
    )
    assert second.choices[0].message.content == f"{SECRET} | {SECRET} | and now?"
    # Bob on the same thread id, on either replica, starts his own thread.
    bob = await stream(two, "t", [user("what did I say?")], thread=thread, headers=api_key("bob"))
    assert text_of(bob) == "what did I say?"
