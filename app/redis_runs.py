"""The run log in Redis: any replica reads, follows, cancels or takes over any run.

Per run (the keys share a hash tag): ``…:{id}:r``, a hash (the record's JSON
and its changing fields: status, error, attempt, cancel), ``…:{id}:e``, a
Redis Stream of the events, each entry's id ``<seq>-1`` (explicit ids: a
repeated ``XADD`` after a lost answer is refused as "equal or smaller", so
an event is never written twice), and ``…:{id}:l``, the lease (the owning
replica's id, with a TTL). ``…:live`` is a sorted set of the runs in
progress by lease deadline: a replica finds orphans with one
``ZRANGEBYSCORE`` and claims one with a script that checks and sets the
lease atomically (exactly one claimer).

The client retries a command after a connection error
(:mod:`agenthost.app.redis_client`), and its first try may have been applied
with only its answer lost; every write here is safe to repeat: records and
leases are set whole (a repeat sets the same), events carry their ids, and a
claim that finds the lease already its own counts as won (else the run would
wait a whole lease for another claimer).

Writes are batched: :meth:`RedisRunLog.append` keeps the event in this
process (followers here read it at once) and one writer task sends every
run's new events in one pipeline per round trip, so 1,000 streams cost one
round trip per batch, not per chunk. :meth:`RedisRunLog.flush` waits for a
run's events to be written (a run does at each finished step). Records and
events expire ``retention`` seconds after their last write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any
from urllib.parse import quote

import orjson
from redis import exceptions as redis_errors
from redis.asyncio import Redis

from agenthost.adapters.durable.log import LocalRunLog, RunRecord
from agenthost.agents.cancelling import cancel_and_wait
from agenthost.agents.errors import StoreUnavailable
from agenthost.app.redis_memory import FAILURES

logger = logging.getLogger("agenthost")

# A claimer that finds the lease already its own is its own claim, retried after its answer
# was lost (a replica never claims a run it runs): it won.
_CLAIM = """
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then return 1 end
if holder then return 0 end
if not redis.call('zscore', KEYS[2], ARGV[3]) then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[4], ARGV[3])
return 1
"""
# A renewal that comes late (the replica was starved past its lease) takes the lease again
# if nobody claimed it meanwhile: the run is still this replica's.
_RENEW = """
local holder = redis.call('get', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[4], ARGV[3])
return 1
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end
if ARGV[3] == '1' then redis.call('zrem', KEYS[2], ARGV[2])
else redis.call('zadd', KEYS[2], 0, ARGV[2]) end
return 1
"""
_FIELDS = ("status", "error", "attempt", "cancel")
INDEXED = 100
"""Runs listed per principal and agent (the playground's runs view): the latest ones."""


class RedisRunLog:
    """Runs in Redis under ``<prefix>:runs:`` (see the module)."""

    shared = True

    def __init__(
        self,
        client: Redis,
        *,
        retention: float,
        timeout: float = 2.0,
        prefix: str = "agenthost",
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.client = client
        self.prefix = f"{prefix}:runs:"
        self.live = self.prefix + "live"
        self.retention_ms = max(1000, int(retention * 1000))
        self.timeout = timeout
        self.local = LocalRunLog(max_bytes)
        """The runs this replica runs, mirrored: its followers read them without Redis."""
        self._pending: dict[str, list[tuple[int, bytes]]] = {}
        self._written: dict[str, int] = {}
        self._dirty = asyncio.Event()
        self._wrote = asyncio.Condition()
        self._writer: asyncio.Task[None] | None = None
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._leases: set[str] = set()
        """The runs this replica holds the lease of."""
        self.batches = 0
        """Round trips the writer made (each carries every run's new events)."""

    def _index(self, principal: str, agent: str) -> str:
        return f"{self.prefix}by:{quote(principal, safe='')}|{quote(agent, safe='')}"

    def _key(self, id: str, kind: str) -> str:
        return f"{self.prefix}{{{quote(id, safe='')}}}:{kind}"

    @asynccontextmanager
    async def _deadline(self) -> AsyncIterator[None]:
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except TimeoutError as exc:
            raise StoreUnavailable(
                f"the run log (Redis) is unavailable: no answer in {self.timeout:g} s"
            ) from exc
        except FAILURES as exc:
            raise StoreUnavailable(f"the run log (Redis) is unavailable: {exc}") from exc

    # -- records ---------------------------------------------------------------------------

    async def create(self, record: RunRecord, owner: str, seconds: float) -> None:
        self.local.add(record)
        data = asdict(record)
        fields: dict[Any, bytes] = {"d": orjson.dumps(data)}
        fields.update((f, orjson.dumps(data[f])) for f in _FIELDS)
        key = self._key(record.id, "r")
        ms = int(seconds * 1000)
        async with self._deadline(), self.client.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=fields)
            pipe.pexpire(key, self.retention_ms)
            pipe.set(self._key(record.id, "l"), owner, px=ms)
            pipe.zadd(self.live, {record.id: int(time.time() * 1000) + ms})
            index = self._index(record.principal, record.agent)
            pipe.zadd(index, {record.id: record.created_at})
            pipe.zremrangebyrank(index, 0, -(INDEXED + 1))
            pipe.pexpire(index, self.retention_ms)
            await pipe.execute()
        self._leases.add(record.id)

    async def get(self, id: str) -> RunRecord | None:
        async with self._deadline():
            raw = await self.client.hgetall(self._key(id, "r"))
        if not raw:
            return await self.local.get(id)
        return _record(raw)

    async def update(self, id: str, **changes: Any) -> None:
        await self.local.update(id, **changes)
        key = self._key(id, "r")
        async with self._deadline(), self.client.pipeline(transaction=True) as pipe:
            mapping: dict[Any, bytes] = {k: orjson.dumps(v) for k, v in changes.items()}
            pipe.hset(key, mapping=mapping)
            pipe.pexpire(key, self.retention_ms)
            await pipe.execute()

    # -- events ----------------------------------------------------------------------------

    def append(self, id: str, event: bytes) -> int:
        seq = self.local.append(id, event)
        self._pending.setdefault(id, []).append((seq, event))
        self._dirty.set()
        return seq

    async def flush(self, id: str) -> None:
        if id not in self.local:
            return
        last = self.local.count(id) - 1
        async with asyncio.timeout(self.timeout * 4), self._wrote:
            await self._wrote.wait_for(lambda: self._written.get(id, -1) >= last)

    async def _write(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            pending, self._pending = self._pending, {}
            try:
                await self._send(pending)
            except (StoreUnavailable, *FAILURES, OSError) as exc:
                logger.warning("run log: writing %d runs' events failed: %s", len(pending), exc)
                for id, events in pending.items():  # kept, in order, before any newer
                    self._pending[id] = events + self._pending.get(id, [])
                self._dirty.set()
                await asyncio.sleep(0.2)
                continue
            async with self._wrote:
                for id, events in pending.items():
                    self._written[id] = events[-1][0]
                self._wrote.notify_all()

    async def _send(self, pending: dict[str, list[tuple[int, bytes]]]) -> None:
        async with self._deadline(), self.client.pipeline(transaction=False) as pipe:
            for id, events in pending.items():
                key = self._key(id, "e")
                for seq, event in events:
                    pipe.xadd(key, {"e": event}, id=f"{seq}-1")
                pipe.pexpire(key, self.retention_ms)
            results = await pipe.execute(raise_on_error=False)
        self.batches += 1
        for result in results:
            if isinstance(result, redis_errors.ResponseError):
                if "equal or smaller" not in str(result):  # an earlier try wrote it
                    raise result
            elif isinstance(result, Exception):
                raise result

    async def events(self, id: str, after: int = -1) -> list[tuple[int, bytes]]:
        if id in self.local and self._owned(id):
            return await self.local.events(id, after)
        start = "-" if after < 0 else f"({after}-1"
        async with self._deadline():
            entries: Any = await self.client.xrange(self._key(id, "e"), min=start)
        return _entries(entries)

    async def wait(self, id: str, after: int, seconds: float) -> list[tuple[int, bytes]]:
        if id in self.local and self._owned(id):
            return await self._wait_written(id, after, seconds)
        block = max(1, int(min(seconds, self.timeout / 2) * 1000))
        last = "0-0" if after < 0 else f"{after}-1"
        async with self._deadline():
            answer: Any = await self.client.xread({self._key(id, "e"): last}, block=block)
        return _entries(answer[0][1]) if answer else []

    async def _wait_written(self, id: str, after: int, seconds: float) -> list[tuple[int, bytes]]:
        """A run of this replica's, read here but only as far as Redis has it: a client
        that reconnects to another replica after event N finds the same event N there
        (what this replica had not written yet is the next owner's to make again)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds), self._wrote:
                await self._wrote.wait_for(
                    lambda: self._written.get(id, -1) > after or not self._owned(id)
                )
        written = self._written.get(id, -1)
        events = await self.local.events(id, after)
        return [(seq, event) for seq, event in events if seq <= written]

    def _owned(self, id: str) -> bool:
        return id in self._leases

    # -- leases ----------------------------------------------------------------------------

    async def claim(self, id: str, owner: str, seconds: float) -> bool:
        ms = int(seconds * 1000)
        deadline = int(time.time() * 1000) + ms
        async with self._deadline():
            taken = await self._claim(
                keys=[self._key(id, "l"), self.live], args=[owner, ms, id, deadline]
            )
        if not taken:
            return False
        if id not in self.local:  # another replica's run: adopt what it recorded
            record = await self.get(id)
            if record is not None:
                self.local.add(record)
                for seq, event in await self.events(id):
                    assert self.local.append(id, event) == seq
                    self._written[id] = seq
        self._leases.add(id)
        return True

    async def renew(self, id: str, owner: str, seconds: float) -> bool:
        ms = int(seconds * 1000)
        deadline = int(time.time() * 1000) + ms
        async with self._deadline():
            mine = await self._renew(
                keys=[self._key(id, "l"), self.live], args=[owner, ms, id, deadline]
            )
        return bool(mine)

    async def release(self, id: str, owner: str, *, settled: bool) -> None:
        self._leases.discard(id)
        async with self._deadline():
            await self._release(
                keys=[self._key(id, "l"), self.live], args=[owner, id, "1" if settled else "0"]
            )
        if not settled:
            self.local.drop(id)  # another replica goes on with it
        async with self._wrote:
            self._written.pop(id, None)
            self._wrote.notify_all()

    async def orphans(self) -> list[str]:
        now = int(time.time() * 1000)
        async with self._deadline():
            ids: Any = await self.client.zrangebyscore(self.live, "-inf", now, start=0, num=100)
        return [i.decode() for i in ids]

    async def recent(self, principal: str, agent: str, limit: int = 50) -> list[RunRecord]:
        async with self._deadline():
            ids: Any = await self.client.zrevrange(self._index(principal, agent), 0, limit - 1)
            async with self.client.pipeline(transaction=False) as pipe:
                for id in ids:
                    pipe.hgetall(self._key(id.decode(), "r"))
                raws: Any = await pipe.execute()
        return [_record(raw) for raw in raws if raw]

    async def start(self) -> None:
        self._writer = asyncio.create_task(self._write(), name="run-log-writer")

    async def aclose(self) -> None:
        if self._writer is not None:
            if self._pending:  # the last events (a handed-over run's) written first
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.timeout), self._wrote:
                        await self._wrote.wait_for(lambda: not self._pending)
            await cancel_and_wait(self._writer)


def _record(raw: Any) -> RunRecord:
    data = orjson.loads(raw[b"d"])
    for field in _FIELDS:
        if field.encode() in raw:
            data[field] = orjson.loads(raw[field.encode()])
    return RunRecord(**data)


def _entries(entries: Any) -> list[tuple[int, bytes]]:
    """(seq, event) of stream entries (ids ``<seq>-1``)."""
    return [(int(entry_id.split(b"-", 1)[0]), fields[b"e"]) for entry_id, fields in entries]
