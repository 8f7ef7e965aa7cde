"""Sessions in Redis: any number of replicas share every conversation.

Chosen by ``AGENTHOST_SESSION_STORE=redis://…`` (or ``rediss://`` for TLS;
password, database and TLS options come from the URL), or
``redis+sentinel://host:26379,…/<service>[/db]`` for a Sentinel-managed
master (a failover is followed). Redis Cluster is not supported. One client (one
connection pool) serves every adapter's store; each store has its own key
namespace.

A conversation is two keys that share a hash tag (so a Redis Cluster keeps
them in one slot):

- ``<prefix>:<namespace>:{<agent>|<session>|<principal>}:m`` — a list, one
  message per element, in the compact encoding of
  :mod:`agenthost.agents.message_codec` (the in-process store keeps the same);
- ``…:h`` — a hash: the metadata, one JSON value per field, plus a marker
  field so that an empty conversation exists.

Appends are one ``MULTI``/``EXEC`` transaction: ``RPUSH`` of the whole turn,
``HSET`` of the metadata and both TTLs. ``RPUSH`` of several values is
atomic, so two replicas appending to one session at once lose nothing and
never interleave a turn, without a lock or a retry loop (``WATCH`` would
need retries under contention; a Lua script would do the same work but is
harder to read and is refused by some managed Redis offerings). Reading a
conversation refreshes both TTLs in the same transaction: the TTL is idle
time, as with the in-process store. A read-modify-write of one entry (a
Conversations update) takes :meth:`RedisMemoryManager.lock`.

Beyond the TTL, capacity is Redis's own policy (``maxmemory`` with
``allkeys-lru``; see docs/deploy.md). A Redis that cannot be reached, or
that refuses a write (``OOM`` at ``maxmemory`` with ``noeviction``), raises
:class:`~agenthost.agents.errors.StoreUnavailable` within the configured
time-out: never a silent empty history.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import orjson
from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.sentinel import Sentinel

from agenthost.agents import Conversation, Message, SessionKey
from agenthost.agents.errors import StoreUnavailable
from agenthost.agents.message_codec import decode_messages, encode_message

_EXISTS = "\x00"  # the hash field that marks a conversation as existing
_UNLOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
FAILURES = (redis_errors.ConnectionError, redis_errors.TimeoutError, redis_errors.ResponseError)


def is_redis_url(url: str) -> bool:
    return url.startswith(("redis://", "rediss://", "unix://", SENTINEL))


SENTINEL = "redis+sentinel://"


def redis_client(url: str, *, timeout: float) -> Redis:
    """A client for ``url`` whose connects and commands each give up after ``timeout`` s."""
    if url.startswith(SENTINEL):
        return _sentinel_client(url, timeout=timeout)
    return Redis.from_url(
        url,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        health_check_interval=30,
    )


def _sentinel_client(url: str, *, timeout: float) -> Redis:
    """The current master of ``redis+sentinel://[[user]:password@]host[:port],…/service[/db]``.

    The sentinels (port 26379 unless given) are asked for the service's
    master at each (re)connect, so a failover is followed; the password is
    the master's (sentinels without auth).
    """
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    nodes = []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "26379")
        nodes.append((name, int(port)))
    service, _, db = parts.path.strip("/").partition("/")
    if not service or not nodes:
        raise ValueError(
            f"a Sentinel URL needs hosts and a service name: {SENTINEL}host:26379/mymaster"
        )
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        nodes, socket_timeout=timeout, socket_connect_timeout=timeout
    )
    master: Redis = sentinel.master_for(
        service,
        db=int(db or 0),
        username=unquote(username) or None,
        password=unquote(password) or None,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
    )
    return master


class RedisMemoryManager:
    """Conversations in Redis under ``<prefix>:<namespace>:``, each expiring when idle."""

    shared = True
    """Every replica sees the same entries (adapters keep cross-replica state here)."""

    def __init__(
        self, client: Redis, namespace: str, *, ttl: float, prefix: str = "agenthost"
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.ttl_ms = max(1, int(ttl * 1000))
        self.prefix = f"{prefix}:{quote(namespace, safe='')}:"

    def _keys(self, key: SessionKey) -> tuple[str, str]:
        tag = "|".join(quote(part, safe="") for part in (key.agent, key.session, key.principal))
        base = f"{self.prefix}{{{tag}}}"
        return base + ":m", base + ":h"

    async def get(self, key: SessionKey) -> Conversation | None:
        messages_key, meta_key = self._keys(key)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.lrange(messages_key, 0, -1)
                pipe.hgetall(meta_key)
                pipe.pexpire(messages_key, self.ttl_ms)
                pipe.pexpire(meta_key, self.ttl_ms)
                raw_messages, raw_meta, *_ = await pipe.execute()
        except FAILURES as exc:
            raise _unavailable(exc) from exc
        if not raw_meta:
            return None
        meta = {
            field.decode(): orjson.loads(value)
            for field, value in raw_meta.items()
            if field != _EXISTS.encode()
        }
        return Conversation(decode_messages(raw_messages), meta)

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        messages_key, meta_key = self._keys(key)
        fields: dict[str, bytes] = {_EXISTS: b""}
        for name, value in (meta or {}).items():
            fields[name] = orjson.dumps(value)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                if messages:
                    pipe.rpush(messages_key, *(encode_message(m) for m in messages))
                    pipe.pexpire(messages_key, self.ttl_ms)
                pipe.hset(meta_key, mapping=fields)  # type: ignore[arg-type]
                pipe.pexpire(meta_key, self.ttl_ms)
                await pipe.execute()
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    async def delete(self, key: SessionKey) -> bool:
        try:
            return bool(await self.client.delete(*self._keys(key)))
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    @asynccontextmanager
    async def lock(self, key: SessionKey, *, hold: float = 10.0) -> AsyncIterator[None]:
        """Hold ``key`` for a read-modify-write, on every replica (at most ``hold`` s)."""
        name = self._keys(key)[1] + ":lock"
        token = uuid.uuid4().hex
        wait = 0.002
        try:
            while not await self.client.set(name, token, nx=True, px=int(hold * 1000)):
                await asyncio.sleep(wait)
                wait = min(wait * 2, 0.05)
        except FAILURES as exc:
            raise _unavailable(exc) from exc
        try:
            yield
        finally:
            with suppress(*FAILURES):  # else the lock expires by itself
                await self.client.eval(_UNLOCK, 1, name, token)

    async def publish(self, topic: str, message: bytes) -> None:
        """Send ``message`` to every replica listening on ``topic`` (this one too)."""
        try:
            await self.client.publish(self.prefix + "topic:" + topic, message)
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    async def subscribe(self, topic: str) -> AsyncIterator[bytes]:
        """The messages published on ``topic`` from now on, for ever.

        An outage of Redis pauses it (what was published meanwhile is lost);
        it resubscribes once Redis is back.
        """
        channel = self.prefix + "topic:" + topic
        while True:
            try:
                async with self.client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(channel)
                    while True:
                        message = await pubsub.get_message(timeout=1.0)
                        if message is not None and message["type"] == "message":
                            yield bytes(message["data"])
            except (*FAILURES, OSError):
                await asyncio.sleep(0.5)

    async def set_lease(self, name: str, seconds: float) -> None:
        """Mark ``name`` held for ``seconds`` (a key that expires by itself)."""
        try:
            await self.client.set(self.prefix + name, b"1", px=max(1, int(seconds * 1000)))
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    async def has_lease(self, name: str) -> bool:
        """Whether ``name`` is held (its mark has not expired)."""
        try:
            return bool(await self.client.exists(self.prefix + name))
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    async def ping(self) -> bool:
        """Whether Redis answers now."""
        try:
            return bool(await self.client.ping())
        except (*FAILURES, OSError):
            return False

    async def aclose(self) -> None:
        await self.client.aclose()
        # A Sentinel-managed client also holds a connection to each sentinel.
        manager = getattr(self.client.connection_pool, "sentinel_manager", None)
        for sentinel in getattr(manager, "sentinels", ()):
            await sentinel.aclose()


def _unavailable(exc: Exception) -> StoreUnavailable:
    if isinstance(exc, redis_errors.ResponseError) and not str(exc).startswith("OOM"):
        raise exc  # a bug of ours, not an outage
    return StoreUnavailable(f"the session store (Redis) is unavailable: {exc}")


def redis_memory_factory(
    url: str, ttl: float, *, timeout: float
) -> Callable[[str], RedisMemoryManager]:
    """``factory(namespace)`` → a Redis store on one shared client."""
    client = redis_client(url, timeout=timeout)

    def new_memory(namespace: str) -> RedisMemoryManager:
        return RedisMemoryManager(client, namespace, ttl=ttl)

    return new_memory
