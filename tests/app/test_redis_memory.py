"""The Redis session store against a real redis-server: the MemoryManager contract."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from redis.asyncio.client import PubSub

from agenthost.adapters.cancels import CancelChannel
from agenthost.agents import Message, SessionKey
from agenthost.agents.errors import StoreUnavailable
from agenthost.agents.sessions import ManagedSession, entry_lock
from agenthost.app.memory import memory_factory
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from tests.stores import RedisServer, ReplyCutter, redis, redis_sentinel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


def key(session: str = "") -> SessionKey:
    return SessionKey("echo", session or uuid.uuid4().hex, "alice")


async def test_the_factory_makes_redis_stores_that_share_one_client(redis: RedisServer) -> None:  # noqa: F811
    new_memory = memory_factory(10, 60, store=redis.url)
    one, two = new_memory("a"), new_memory("b")
    assert isinstance(one, RedisMemoryManager) and isinstance(two, RedisMemoryManager)
    assert one.client is two.client
    k = key()
    await one.append(k, [Message.user("hi")])
    assert await two.get(k) is None  # namespaces never meet
    assert [m.text for m in (await one.get(k) or pytest.fail("missing")).messages] == ["hi"]
    await one.aclose()
    await two.aclose()


async def test_append_get_delete_and_meta(redis: RedisServer) -> None:  # noqa: F811
    memory = RedisMemoryManager(redis_client(redis.url, timeout=2), "t", ttl=60)
    k = key()
    assert await memory.get(k) is None
    await memory.append(k, [], meta={"cwd": "/tmp"})
    stored = await memory.get(k)
    assert stored is not None and stored.messages == [] and stored.meta == {"cwd": "/tmp"}
    await memory.append(k, [Message.user("a"), Message.assistant("b")], meta={"n": [1, {"x": 2}]})
    stored = await memory.get(k)
    assert stored is not None
    assert [(m.role, m.text) for m in stored.messages] == [("user", "a"), ("assistant", "b")]
    assert stored.meta == {"cwd": "/tmp", "n": [1, {"x": 2}]}
    other = SessionKey(k.agent, k.session, "mallory")
    assert await memory.get(other) is None
    assert await memory.delete(k) is True
    assert await memory.delete(k) is False
    assert await memory.get(k) is None
    await memory.aclose()


async def test_messages_in_redis_are_json_that_every_version_reads(redis: RedisServer) -> None:  # noqa: F811
    # Replicas of two versions share these lists during a rolling upgrade: never the
    # in-process LRU's tagged form, which an agenthost before it cannot read.
    memory = RedisMemoryManager(redis_client(redis.url, timeout=2), "t", ttl=60)
    k = key()
    said = Message.user("hi").model_copy(update={"id": uuid.uuid4().hex})  # tagged in process
    await memory.append(k, [said, Message.assistant("hello")])
    messages_key, _ = memory._keys(k)
    raws = await memory.client.lrange(messages_key, 0, -1)
    assert [orjson.loads(raw)["parts"][0]["text"] for raw in raws] == ["hi", "hello"]
    stored = await memory.get(k)
    assert stored is not None and stored.messages[0] == said
    await memory.aclose()


async def test_the_ttl_is_idle_time_and_reading_refreshes_it(redis: RedisServer) -> None:  # noqa: F811
    memory = RedisMemoryManager(redis_client(redis.url, timeout=2), "t", ttl=0.6)
    k = key()
    await memory.append(k, [Message.user("a")])
    for _ in range(4):
        await asyncio.sleep(0.3)
        assert await memory.get(k) is not None  # each read keeps it
    await asyncio.sleep(0.9)
    assert await memory.get(k) is None
    await memory.aclose()


async def test_concurrent_turns_from_many_clients_all_land_whole(redis: RedisServer) -> None:  # noqa: F811
    # Two clients (two pools, as two replicas would have) appending at once.
    stores = [RedisMemoryManager(redis_client(redis.url, timeout=5), "t", ttl=60) for _ in "ab"]
    k = key()

    async def turn(i: int) -> None:
        session = ManagedSession(stores[i % 2], k)
        await session.append([Message.user(f"q{i}"), Message.assistant(f"a{i}")])

    await asyncio.gather(*(turn(i) for i in range(200)))
    stored = await stores[0].get(k)
    assert stored is not None
    texts = [m.text for m in stored.messages]
    assert len(texts) == 400
    pairs = list(zip(texts[::2], texts[1::2], strict=True))
    assert sorted(pairs) == sorted((f"q{i}", f"a{i}") for i in range(200))
    for store in stores:
        await store.aclose()


async def test_the_entry_lock_serialises_read_modify_writes(redis: RedisServer) -> None:  # noqa: F811
    stores = [RedisMemoryManager(redis_client(redis.url, timeout=5), "t", ttl=60) for _ in "ab"]
    k = key()
    await stores[0].append(k, [], meta={"count": 0})

    async def bump(i: int) -> None:
        store = stores[i % 2]
        async with entry_lock(store, k):
            stored = await store.get(k)
            assert stored is not None
            await store.append(k, [], meta={"count": stored.meta["count"] + 1})

    await asyncio.gather(*(bump(i) for i in range(50)))
    assert (await stores[1].get(k) or pytest.fail("missing")).meta["count"] == 50
    for store in stores:
        await store.aclose()


async def test_an_unreachable_redis_is_a_quick_store_unavailable() -> None:
    from tests.upstream import free_port

    memory = RedisMemoryManager(
        redis_client(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5), "t", ttl=60
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(StoreUnavailable, match="unavailable"):
        await memory.get(key())
    with pytest.raises(StoreUnavailable):
        await memory.append(key(), [Message.user("a")])
    assert loop.time() - started < 2 * 0.5 + 0.5  # every retry within the time-out
    assert await memory.ping() is False
    await memory.aclose()


async def test_a_restarted_redis_is_used_again_without_a_restart_of_ours(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    memory = RedisMemoryManager(redis_client(server.url, timeout=0.5), "t", ttl=60)
    k = key()
    try:
        await memory.append(k, [Message.user("before")])
        server.stop()
        with pytest.raises(StoreUnavailable):
            await memory.append(k, [Message.user("during")])
        server.start()
        await memory.append(k, [Message.user("after")])
        stored = await memory.get(k)
        assert stored is not None and [m.text for m in stored.messages] == ["before", "after"]
    finally:
        await memory.aclose()
        server.stop()


async def test_a_restart_is_not_seen_by_the_next_requests_on_stale_connections(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    memory = RedisMemoryManager(redis_client(server.url, timeout=0.5), "t", ttl=60)
    keys = [key() for _ in range(8)]
    try:
        # Eight at once: eight pooled connections, all closed by the restart.
        await asyncio.gather(*(memory.append(k, [Message.user("before")]) for k in keys))
        server.stop()
        server.start()
        await asyncio.gather(*(memory.append(k, [Message.user("after")]) for k in keys))
        for k in keys:
            stored = await memory.get(k) or pytest.fail("lost")
            assert [m.text for m in stored.messages] == ["before", "after"]
    finally:
        await memory.aclose()
        server.stop()


async def test_an_outage_is_store_unavailable_within_the_time_out(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    memory = RedisMemoryManager(redis_client(server.url, timeout=0.5), "t", ttl=60)
    loop = asyncio.get_running_loop()
    try:
        await memory.append(key(), [Message.user("up")])
        server.stop()
        for _ in range(3):
            started = loop.time()
            with pytest.raises(StoreUnavailable, match="unavailable"):
                await memory.get(key())
            assert loop.time() - started < 0.5 + 0.3
    finally:
        await memory.aclose()


async def test_an_append_whose_answer_is_lost_is_retried_and_applied_once(
    redis: RedisServer,  # noqa: F811
) -> None:
    async with ReplyCutter(redis.port) as proxy:
        memory = RedisMemoryManager(
            redis_client(f"redis://127.0.0.1:{proxy.port}/0", timeout=2), "t", ttl=60
        )
        direct = redis_client(redis.url, timeout=2)
        k = key()
        await memory.append(k, [Message.user("first")])  # the script is loaded now
        before = (await direct.info("commandstats")).get("cmdstat_evalsha", {}).get("calls", 0)
        proxy.marker = b"cut here"
        await memory.append(k, [Message.user("cut here")], meta={"n": 1})
        after = (await direct.info("commandstats"))["cmdstat_evalsha"]["calls"]
        assert proxy.cuts == 1
        assert after - before == 2  # applied, its answer lost, then sent again
        stored = await memory.get(k) or pytest.fail("missing")
        assert [m.text for m in stored.messages] == ["first", "cut here"]
        assert stored.meta == {"n": 1}
        await memory.aclose()
        await direct.aclose()


async def test_a_sentinel_url_reaches_the_master_it_names(
    redis: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    with redis_sentinel(redis, tmp_path, "agents") as port:
        new_memory = memory_factory(10, 60, store=f"redis+sentinel://127.0.0.1:{port}/agents/0")
        memory = new_memory("sentinel")
        k = key()
        await memory.append(k, [Message.user("through the sentinel")])
        # The same entry, read straight from the master.
        direct = RedisMemoryManager(redis_client(redis.url, timeout=2), "sentinel", ttl=60)
        stored = await direct.get(k) or pytest.fail("not on the master")
        assert [m.text for m in stored.messages] == ["through the sentinel"]
        await memory.aclose()
        await direct.aclose()


def test_a_sentinel_url_without_a_service_is_refused() -> None:
    with pytest.raises(ValueError, match="service name"):
        redis_client("redis+sentinel://127.0.0.1:26379", timeout=1)


class _ReadLosesACancel(RedisMemoryManager):
    """A store whose pub/sub read loses the cancel that lands on it, as Python 3.11's
    ``asyncio.wait_for`` does when the read it wraps completes at that moment."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reading = asyncio.Event()

    async def _next_message(self, pubsub: PubSub) -> dict[str, Any] | None:
        message = await super()._next_message(pubsub)
        self.reading.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return message  # lost
        return message


async def test_a_listener_ends_when_a_read_loses_its_cancel(redis: RedisServer) -> None:  # noqa: F811
    store = _ReadLosesACancel(
        redis_client(redis.url, timeout=2), f"lost-{uuid.uuid4().hex}", ttl=60
    )
    try:
        listener = asyncio.create_task(CancelChannel(store, "test").listen(_never_called))
        await asyncio.wait_for(store.reading.wait(), 30)
        listener.cancel()
        done, _ = await asyncio.wait([listener], timeout=10)
        assert done == {listener} and listener.cancelled()
    finally:
        await store.aclose()


async def _never_called(principal: str, id: str) -> None:
    raise AssertionError("no cancel was sent")
