"""The shared conversation namespace's store layer: routing, stamps, the UUID rule.

On the in-process store and on a real Redis; the protocols' own clients
are in tests/scale/test_shared_conversations.py.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from agenthost.agents import Message, SessionKey
from agenthost.agents.sessions import ManagedSession, entry_lock
from agenthost.app.host import Host
from agenthost.app.memory import LRUMemoryManager, memory_factory
from agenthost.app.settings import Settings
from agenthost.app.shared_sessions import (
    CONVERSATION_NAMESPACE,
    SessionRouter,
    conversation_uuid,
    shared_agents,
)
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


def test_the_uuid_rule() -> None:
    canonical = str(uuid.uuid4())
    assert conversation_uuid(canonical) == uuid.UUID(canonical)
    # Any other id, a UUID in another form too, is uuid5 of the id.
    for id in ("conv_0123abcd", "support-42", canonical.upper(), uuid.UUID(canonical).hex):
        assert conversation_uuid(id) == uuid.uuid5(CONVERSATION_NAMESPACE, id)
    assert conversation_uuid("a") != conversation_uuid("b")


def test_which_agents_share() -> None:
    agents = ["a", "b", "c"]
    assert shared_agents(agents, "isolated", {}) == frozenset()
    assert shared_agents(agents, "shared", {"b": "isolated"}) == {"a", "c"}
    assert shared_agents(agents, "isolated", {"c": "shared"}) == {"c"}


@pytest.fixture(params=["memory", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    if request.param == "memory":
        yield "memory"
    else:
        server: RedisServer = request.getfixturevalue("redis")
        yield server.url


async def test_shared_agents_meet_in_one_store_stamped_by_protocol(stores: str) -> None:
    new = memory_factory(100, 60, store=stores)
    common = new("conversations")
    a2a = SessionRouter(new("a2a"), common, frozenset({"chat"}), "a2a")
    mcp = SessionRouter(new("mcp"), common, frozenset({"chat"}), "mcp")
    id = f"ctx-{uuid.uuid4().hex}"
    await ManagedSession(a2a, SessionKey("chat", id, "alice")).append(
        [Message.user("one"), Message.assistant("two")]
    )
    await ManagedSession(mcp, SessionKey("chat", id, "alice")).append([Message.user("three")])
    seen = await mcp.get(SessionKey("chat", id, "alice"))
    assert seen is not None
    assert [m.text for m in seen.messages] == ["one", "two", "three"]
    assert [(m.metadata or {})["protocol"] for m in seen.messages] == ["a2a", "a2a", "mcp"]
    assert all(m.id for m in seen.messages)
    # Another principal, another agent, or an isolated one: nothing crosses.
    assert await mcp.get(SessionKey("chat", id, "bob")) is None
    assert await mcp.get(SessionKey("solo", id, "alice")) is None
    await a2a.append(SessionKey("solo", id, "alice"), [Message.user("own")])
    assert await mcp.get(SessionKey("solo", id, "alice")) is None
    solo = await a2a.get(SessionKey("solo", id, "alice"))
    assert solo is not None and solo.messages[0].metadata is None  # not stamped: not shared
    assert await mcp.delete(SessionKey("chat", id, "alice"))
    assert await a2a.get(SessionKey("chat", id, "alice")) is None
    for store in (common, a2a.own, mcp.own):
        await store.aclose()


async def test_a_uuid_only_protocol_reaches_any_id_by_its_uuid(stores: str) -> None:
    new = memory_factory(100, 60, store=stores)
    common = new("conversations")
    mcp = SessionRouter(new("mcp"), common, frozenset({"chat"}), "mcp")
    acp = SessionRouter(new("acp"), common, frozenset({"chat"}), "acp")
    id = f"support-{uuid.uuid4().hex}"
    await mcp.append(SessionKey("chat", id, "alice"), [Message.user("hello")])
    by_uuid = SessionKey("chat", str(conversation_uuid(id)), "alice")
    found = await acp.get(by_uuid)
    assert found is not None and [m.text for m in found.messages] == ["hello"]
    await acp.append(by_uuid, [Message.assistant("hi")])
    async with entry_lock(acp, by_uuid):
        pass
    again = await mcp.get(SessionKey("chat", id, "alice"))
    assert again is not None and [m.text for m in again.messages] == ["hello", "hi"]
    # The alias is the principal's: bob's UUID of the same id reaches nothing.
    assert await acp.get(SessionKey("chat", by_uuid.session, "bob")) is None
    # A conversation made under a canonical UUID needs no alias.
    native = str(uuid.uuid4())
    await acp.append(SessionKey("chat", native, "alice"), [Message.user("x")])
    assert await mcp.get(SessionKey("chat", native, "alice")) is not None
    for store in (common, mcp.own, acp.own):
        await store.aclose()


async def test_the_host_routes_only_when_an_agent_shares() -> None:
    from agenthost.agents import ChatAgent
    from agenthost.agents.models import FunctionModel

    agents = {"chat": ChatAgent("chat", FunctionModel(lambda request: "ok"))}
    isolated = Host(Settings(), agents)
    assert isinstance(isolated.context("mcp").memory, LRUMemoryManager)
    assert isolated.context("mcp").shared_sessions == frozenset()
    shared = Host(Settings(sessions="shared"), agents)
    one, two = shared.context("mcp").memory, shared.context("a2a").memory
    assert isinstance(one, SessionRouter) and isinstance(two, SessionRouter)
    assert one.common is two.common and one.own is not two.own
    assert not one.shared  # the in-process store is no replica-shared store
    assert shared.context("a2a").shared_sessions == {"chat"}


async def test_a_router_over_redis_keeps_the_replica_channels_of_its_own_store(
    redis: RedisServer,  # noqa: F811
) -> None:
    import anyio

    from agenthost.adapters.cancels import CancelChannel
    from agenthost.adapters.leases import Leases

    new = memory_factory(100, 60, store=redis.url)
    router = SessionRouter(new("a2a"), new("conversations"), frozenset({"chat"}), "a2a")
    assert router.shared
    leases = Leases.of(router, "a2a", 5)
    assert leases is not None
    await leases.take("alice", "run-1")
    assert await router.has_lease("lease:a2a:alice|run-1")
    channel = CancelChannel.of(router, "a2a")
    assert channel is not None
    heard: list[tuple[str, str]] = []

    async def stop(principal: str, id: str) -> None:
        heard.append((principal, id))

    async with anyio.create_task_group() as group:
        group.start_soon(channel.listen, stop)
        with anyio.fail_after(20):
            while not heard:
                await channel.send("alice", "task-1")
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    assert heard[0] == ("alice", "task-1")
    await router.aclose()  # the host closes the stores, not the router
    await router.own.aclose()
