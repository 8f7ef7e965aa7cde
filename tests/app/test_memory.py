import secrets

import pytest

from agenthost.agents import ChatAgent, Message, SessionKey
from agenthost.agents.models import EchoModel
from agenthost.agents.sessions import ManagedSession
from agenthost.app.memory import LRUMemoryManager, message_bytes

pytestmark = pytest.mark.anyio


async def test_least_recently_used_sessions_are_evicted_and_counted() -> None:
    memory = LRUMemoryManager("test", max_sessions=2, ttl=60)
    a, b, c = (SessionKey("agent", s, "p") for s in "abc")
    await memory.append(a, [Message.user("a")])
    await memory.append(b, [Message.user("b")])
    assert await memory.get(a) is not None  # a is now more recent than b
    await memory.append(c, [Message.user("c")])
    assert await memory.get(b) is None
    assert await memory.get(a) is not None and await memory.get(c) is not None
    assert (memory.size, memory.evictions) == (2, 1)


async def test_idle_sessions_expire() -> None:
    now = [0.0]
    memory = LRUMemoryManager("test", max_sessions=10, ttl=5, timer=lambda: now[0])
    key = SessionKey("agent", "s", "p")
    await memory.append(key, [Message.user("hi")])
    now[0] = 4
    assert await memory.get(key) is not None
    now[0] = 8  # 8 s after the write but 4 s after the read: reading refreshed it
    assert await memory.get(key) is not None
    now[0] = 14
    assert await memory.get(key) is None
    await memory.append(SessionKey("agent", "other", "p"), [])
    assert memory.evictions == 1


async def test_keys_are_scoped_by_agent_and_meta_merges() -> None:
    memory = LRUMemoryManager("test", max_sessions=10, ttl=60)
    await memory.append(SessionKey("one", "s", "p"), [Message.user("for one")], meta={"a": 1})
    await memory.append(SessionKey("one", "s", "p"), [], meta={"b": 2})
    assert await memory.get(SessionKey("two", "s", "p")) is None
    stored = await memory.get(SessionKey("one", "s", "p"))
    assert stored is not None and stored.meta == {"a": 1, "b": 2}
    assert await memory.delete(SessionKey("one", "s", "p")) is True
    assert await memory.delete(SessionKey("one", "s", "p")) is False


async def test_an_agent_continues_a_managed_session() -> None:
    memory = LRUMemoryManager("test", max_sessions=10, ttl=60)
    session = ManagedSession(memory, SessionKey("echo", "s1", "p"))
    agent = ChatAgent("echo", EchoModel())
    await agent.run("one", session=session)
    await agent.run("two", session=session)
    stored = await memory.get(SessionKey("echo", "s1", "p"))
    assert stored is not None
    assert [m.text for m in stored.messages] == ["one", "one", "two", "two"]


async def test_the_byte_budget_drops_least_recently_used_sessions() -> None:
    memory = LRUMemoryManager("test", max_sessions=100, ttl=60, max_bytes=10_000)
    keys = [SessionKey("agent", str(n), "p") for n in range(5)]
    for key in keys:
        await memory.append(key, [Message.user("x" * 3000)])
        assert memory.bytes <= 10_000
    assert memory.size == 3 and memory.evictions == 2
    assert [await memory.get(k) is not None for k in keys] == [False, False, True, True, True]
    await memory.append(keys[2], [Message.user("y" * 3000)])  # grows: the oldest other goes
    assert await memory.get(keys[3]) is None and await memory.get(keys[2]) is not None
    too_big = SessionKey("agent", "big", "p")
    await memory.append(too_big, [Message.user("z" * 20_000)])  # larger than the budget
    assert await memory.get(too_big) is None and memory.bytes <= 10_000
    assert await memory.get(keys[4]) is not None  # the others stay
    assert await memory.delete(keys[4]) and memory.bytes == await memory_bytes(memory, keys[2])


async def test_many_large_requests_keep_every_store_under_its_byte_budget() -> None:
    from agenthost.app.settings import Settings
    from tests.conftest import running

    budget = 4 * 1024 * 1024
    settings = Settings(adapters=["openai"], session_max_bytes=budget, max_output_chars=2_000_000)
    big = secrets.token_hex(500_000)  # 1 MB that deflates to ~0.5 MB, echoed back
    agents = {"echo": ChatAgent("echo", EchoModel())}
    async with running(agents, settings) as (app, http):
        for _ in range(12):
            answer = await http.post("/v1/responses", json={"model": "echo", "input": big})
            assert answer.status_code == 200, answer.text
        stores = app.state.host._memories
        assert stores and all(store.bytes <= budget for store in stores)
        assert sum(store.evictions for store in stores) > 0


async def memory_bytes(memory: LRUMemoryManager, key: SessionKey) -> int:
    conversation = await memory.get(key)
    assert conversation is not None
    return sum(message_bytes(m) for m in conversation.messages)


async def test_sessions_are_kept_encoded_and_decoded_on_get() -> None:
    memory = LRUMemoryManager("test", max_sessions=10, ttl=60)
    key = SessionKey("agent", "s", "p")
    turn = [Message.user("hi"), Message.assistant("hello")]
    await memory.append(key, turn, meta={"n": 1})
    await memory.append(key, [Message.user("again")])
    stored = memory._cache[key].messages  # what the store holds
    assert all(isinstance(raw, bytes) for raw in stored) and len(stored) == 3
    first = await memory.get(key)
    assert first is not None and first.messages == [*turn, Message.user("again")]
    assert first.meta == {"n": 1}
    first.messages.clear()  # a read hands back a copy: the stored session stays
    second = await memory.get(key)
    assert second is not None and len(second.messages) == 3


async def test_an_expired_session_is_not_deleted_twice_and_is_counted_once() -> None:
    now = [0.0]
    memory = LRUMemoryManager("test", max_sessions=10, ttl=5, timer=lambda: now[0])
    old, new = SessionKey("agent", "old", "p"), SessionKey("agent", "new", "p")
    await memory.append(old, [Message.user("hi")], meta={"n": 1})
    now[0] = 6
    assert await memory.delete(old) is False  # expired: as if gone
    await memory.append(new, [Message.user("again")])  # a write drops the expired one
    assert (memory.size, memory.evictions) == (1, 1)
    assert memory.bytes == await memory_bytes(memory, new)
