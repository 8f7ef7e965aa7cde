"""Sessions in Redis: any number of replicas share every conversation.

Chosen by ``AGENTHOST_SESSION_STORE=redis://…`` (or ``rediss://`` for TLS;
password, database and TLS options come from the URL), or
``redis+sentinel://host:26379,…/<service>[/db]`` for a Sentinel-managed
master (a failover is followed). Redis Cluster is not supported. One client (one
connection pool) serves every adapter's store; each store has its own key
namespace.

A conversation is three keys that share a hash tag (so a Redis Cluster keeps
them in one slot):

- ``<prefix>:<namespace>:{<agent>|<session>|<principal>}:m`` — a list, one
  message per element, in the compact encoding of
  :mod:`agenthost.agents.message_codec` (the in-process store keeps the same);
- ``…:h`` — a hash: the metadata, one JSON value per field, plus a marker
  field so that an empty conversation exists;
- ``…:t`` — a sorted set of the tokens of recent appends (see below).

An append is one Lua script: it records the append's fresh token in ``:t``,
``RPUSH``-es the whole turn, ``HSET``-s the metadata and sets the TTLs, or
does nothing when ``:t`` already holds its token. A script runs atomically,
so two replicas appending to one session at once lose nothing and never
interleave a turn, without a lock or a retry loop; and the client may retry
it after a connection error (see :mod:`agenthost.app.redis_client`) without
ever applying a turn twice, even when the first try was applied and only
its answer was lost. (A ``MULTI``/``EXEC`` of the same commands, as before,
cannot skip a repeat; a ``WATCH`` of the token before it can, but costs two
more round trips per append. Tokens are kept :data:`TOKEN_SECONDS`.)
Reading a conversation refreshes the TTLs of ``:m`` and ``:h`` in one
transaction: the TTL is idle time, as with the in-process store. A
read-modify-write of one entry (a Conversations update) takes
:meth:`RedisMemoryManager.lock`.

Beyond the TTL, capacity is Redis's own policy (``maxmemory`` with
``allkeys-lru``; see docs/deploy.md). A Redis that cannot be reached, or
that refuses a write (``OOM`` at ``maxmemory`` with ``noeviction``), raises
:class:`~agenthost.agents.errors.StoreUnavailable` within the configured
time-out (every attempt included): never a silent empty history. A restart
of Redis is not seen by clients once it answers again: stale connections
are retried on fresh ones.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any
from urllib.parse import quote

import orjson
from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from agenthost.agents import Conversation, Message, SessionKey
from agenthost.agents.errors import StoreUnavailable
from agenthost.agents.message_codec import decode_messages, encode_json
from agenthost.app.redis_client import SENTINEL, is_redis_url, redis_client

__all__ = ["SENTINEL", "RedisMemoryManager", "is_redis_url", "redis_client", "redis_memory_factory"]

_EXISTS = "\x00"  # the hash field that marks a conversation as existing
_UNLOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# KEYS: messages, meta, applied tokens. ARGV: token, now (ms), forget tokens older than
# (ms), ttl (ms), tokens' ttl (ms), number of meta fields, the fields and values, messages.
_APPEND = """
if redis.call('zscore', KEYS[3], ARGV[1]) then return 0 end
redis.call('zadd', KEYS[3], ARGV[2], ARGV[1])
redis.call('zremrangebyscore', KEYS[3], '-inf', ARGV[3])
redis.call('pexpire', KEYS[3], ARGV[5])
local first = 7 + 2 * tonumber(ARGV[6])
for i = 7, first - 1, 2 do redis.call('hset', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('pexpire', KEYS[2], ARGV[4])
for i = first, #ARGV, 1000 do
  redis.call('rpush', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if #ARGV >= first then redis.call('pexpire', KEYS[1], ARGV[4]) end
return 1
"""
TOKEN_SECONDS = 600.0
"""How long an append's token is kept: a repeat of it within this time is not applied."""
FAILURES = (redis_errors.ConnectionError, redis_errors.TimeoutError, redis_errors.ResponseError)


class RedisMemoryManager:
    """Conversations in Redis under ``<prefix>:<namespace>:``, each expiring when idle.

    Each operation, its retries included, has ``timeout`` seconds (by default
    the client's socket time-out) before it raises
    :class:`~agenthost.agents.errors.StoreUnavailable`.
    """

    shared = True
    """Every replica sees the same entries (adapters keep cross-replica state here)."""

    def __init__(
        self,
        client: Redis,
        namespace: str,
        *,
        ttl: float,
        prefix: str = "agenthost",
        timeout: float | None = None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.ttl_ms = max(1, int(ttl * 1000))
        self.prefix = f"{prefix}:{quote(namespace, safe='')}:"
        socket_timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
        self.timeout = float(timeout or socket_timeout or 2.0)
        self._append = client.register_script(_APPEND)

    def _keys(self, key: SessionKey) -> tuple[str, str]:
        tag = "|".join(quote(part, safe="") for part in (key.agent, key.session, key.principal))
        base = f"{self.prefix}{{{tag}}}"
        return base + ":m", base + ":h"

    @asynccontextmanager
    async def _deadline(self) -> AsyncIterator[None]:
        """Bound one operation, retries included; its failures become StoreUnavailable."""
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except TimeoutError as exc:  # the deadline, not one socket's time-out
            raise StoreUnavailable(
                f"the session store (Redis) is unavailable: no answer in {self.timeout:g} s"
            ) from exc
        except FAILURES as exc:
            raise _unavailable(exc) from exc

    async def get(self, key: SessionKey) -> Conversation | None:
        messages_key, meta_key = self._keys(key)
        async with self._deadline(), self.client.pipeline(transaction=True) as pipe:
            pipe.lrange(messages_key, 0, -1)
            pipe.hgetall(meta_key)
            pipe.pexpire(messages_key, self.ttl_ms)
            pipe.pexpire(meta_key, self.ttl_ms)
            raw_messages, raw_meta, *_ = await pipe.execute()
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
        """Add a turn, whole, at most once: a retry after a lost answer is not applied twice.

        The script records a fresh token in the conversation's ``:t`` sorted
        set in the same atomic step as the write and skips a token it has
        seen, so redis-py's retry of the call (on a new connection, after a
        connection error) cannot double the turn, even when the first try was
        applied and only its answer was lost, or arrives after the retry.
        """
        messages_key, meta_key = self._keys(key)
        fields: dict[str, bytes] = {_EXISTS: b""}
        for name, value in (meta or {}).items():
            fields[name] = orjson.dumps(value)
        now = int(time.time() * 1000)
        keep = int(TOKEN_SECONDS * 1000)
        args: list[Any] = [uuid.uuid4().hex, now, now - keep, self.ttl_ms]
        args += [max(self.ttl_ms, keep), len(fields)]
        for name, raw in fields.items():
            args += [name, raw]
        # JSON, which every agenthost reads: replicas of two versions share these lists
        # during a rolling upgrade (the tagged form is the in-process LRU's).
        args += [encode_json(m) for m in messages]
        async with self._deadline():
            await self._append(keys=[messages_key, meta_key, meta_key[:-2] + ":t"], args=args)

    async def delete(self, key: SessionKey) -> bool:
        messages_key, meta_key = self._keys(key)
        async with self._deadline(), self.client.pipeline(transaction=True) as pipe:
            pipe.delete(messages_key, meta_key)
            pipe.delete(meta_key[:-2] + ":t")
            deleted, _ = await pipe.execute()
        return bool(deleted)

    @asynccontextmanager
    async def lock(self, key: SessionKey, *, hold: float = 10.0) -> AsyncIterator[None]:
        """Hold ``key`` for a read-modify-write, on every replica (at most ``hold`` s)."""
        name = self._keys(key)[1] + ":lock"
        token = uuid.uuid4().hex
        wait = 0.002
        while True:
            async with self._deadline():
                if await self.client.set(name, token, nx=True, px=int(hold * 1000)):
                    break
                # A retried SET finds the lock its lost first try took: ours.
                if await self.client.get(name) == token.encode():
                    break
            await asyncio.sleep(wait)
            wait = min(wait * 2, 0.05)
        try:
            yield
        finally:
            with suppress(StoreUnavailable):  # else the lock expires by itself
                async with self._deadline():
                    await self.client.eval(_UNLOCK, 1, name, token)

    async def publish(self, topic: str, message: bytes) -> None:
        """Send ``message`` to every replica listening on ``topic`` (this one too).

        After a connection error it may be sent twice: listeners must accept a repeat.
        """
        async with self._deadline():
            await self.client.publish(self.prefix + "topic:" + topic, message)

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
                        message = await self._next_message(pubsub)
                        _end_if_cancelled()
                        if message is not None and message["type"] == "message":
                            yield bytes(message["data"])
            except (*FAILURES, OSError):
                _end_if_cancelled()
                await asyncio.sleep(0.5)

    async def _next_message(self, pubsub: PubSub) -> dict[str, Any] | None:
        message: dict[str, Any] | None = await pubsub.get_message(timeout=1.0)
        return message

    async def set_lease(self, name: str, seconds: float) -> None:
        """Mark ``name`` held for ``seconds`` (a key that expires by itself)."""
        async with self._deadline():
            await self.client.set(self.prefix + name, b"1", px=max(1, int(seconds * 1000)))

    async def has_lease(self, name: str) -> bool:
        """Whether ``name`` is held (its mark has not expired)."""
        async with self._deadline():
            return bool(await self.client.exists(self.prefix + name))

    async def ping(self) -> bool:
        """Whether Redis answers within the deadline (a stale connection is replaced)."""
        try:
            async with self._deadline():
                return bool(await self.client.ping())
        except (StoreUnavailable, redis_errors.ResponseError, OSError):
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
        return RedisMemoryManager(client, namespace, ttl=ttl, timeout=timeout)

    return new_memory


def _end_if_cancelled() -> None:
    """Raise the cancel of the current task that a call swallowed.

    Python 3.11's ``asyncio.wait_for``, which redis-py sends commands and reads through,
    loses a cancel that lands as the call it wraps completes; the task still counts the
    request (``Task.cancelling()``), so a loop that checks it ends all the same (a
    listener left running for ever held the server's shutdown after a Redis outage).
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
