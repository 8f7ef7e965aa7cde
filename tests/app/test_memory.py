import pytest

from agenthost.agents import ChatAgent, Message, SessionKey
from agenthost.agents.models import EchoModel
from agenthost.agents.sessions import ManagedSession
from agenthost.app.memory import LRUMemoryManager

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
