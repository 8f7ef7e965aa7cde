"""Where the quota counters of each principal live: this process, or Redis.

Three counters per principal, the same two implementations for each:

- **the request rate**, by GCRA (the generic cell rate algorithm, as
  redis-cell and go-redis' ``redis_rate`` do it): one number per principal,
  the time its next request is due ("theoretical arrival time"). ``rate``
  requests a minute may come at once, then one every ``60/rate`` s; a
  refusal knows exactly when the next one passes (its ``Retry-After``).
  A small Lua script rather than the ``limits`` package: it runs on the
  client every shared store already uses (its time-outs and retries, see
  :mod:`agenthost.app.redis_client`), keeps one key per principal (a moving
  window keeps a timestamp per request), and takes the time from Redis, so
  replicas with skewed clocks share one rate.
- **runs in progress**: a slot per run, a sorted set member scored by its
  lease's end; the holder refreshes its slots every third of the lease, so a
  replica that dies gives its slots back when their leases end.
- **model tokens per UTC day**: one counter per principal and day, kept two
  days.

A command redis-py retries (after a connection error) may be applied twice:
a request or a few tokens counted twice errs on the side of the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

if TYPE_CHECKING:
    from redis.asyncio import Redis

PERIOD = 60.0
"""The rate's period, seconds."""
RUN_LEASE = 60.0
"""Seconds a run's slot is held in Redis without a refresh (a dead replica's expire)."""
DAY_SECONDS = 86_400


class QuotaStore(Protocol):
    """The counters; every method is safe to call concurrently."""

    async def take_request(self, principal: str, rate: int) -> float:
        """Count a request against ``rate`` a minute: 0 if it passes, else the seconds until
        one would (the request is then not counted)."""
        ...

    async def take_run(self, principal: str, limit: int, run: str) -> bool:
        """Hold a slot named ``run`` if fewer than ``limit`` are held."""
        ...

    async def give_back_run(self, principal: str, run: str) -> None: ...

    async def add_tokens(self, principal: str, day: str, tokens: int) -> None: ...

    async def tokens_used(self, principal: str, day: str) -> int: ...

    async def aclose(self) -> None: ...


class LocalQuotaStore:
    """The counters of this process only."""

    def __init__(self) -> None:
        self._due: dict[str, float] = {}  # principal → its rate's theoretical arrival time
        self._runs: Counter[str] = Counter()
        self._tokens: dict[tuple[str, str], int] = {}

    async def take_request(self, principal: str, rate: int) -> float:
        now = time.monotonic()
        due = max(self._due.get(principal, now), now) + PERIOD / rate
        if due - PERIOD > now:
            return due - PERIOD - now
        self._due[principal] = due
        if len(self._due) > 10_000:  # forget principals back under their rate
            self._due = {p: t for p, t in self._due.items() if t > now}
        return 0.0

    async def take_run(self, principal: str, limit: int, run: str) -> bool:
        if self._runs[principal] >= limit:
            return False
        self._runs[principal] += 1
        return True

    async def give_back_run(self, principal: str, run: str) -> None:
        self._runs[principal] -= 1
        if self._runs[principal] <= 0:
            del self._runs[principal]

    async def add_tokens(self, principal: str, day: str, tokens: int) -> None:
        key = (principal, day)
        if key not in self._tokens:  # a new day: forget the others
            self._tokens = {k: v for k, v in self._tokens.items() if k[1] == day}
        self._tokens[key] = self._tokens.get(key, 0) + tokens

    async def tokens_used(self, principal: str, day: str) -> int:
        return self._tokens.get((principal, day), 0)

    async def aclose(self) -> None:
        return None


# KEYS: the principal's due time. ARGV: interval (µs), period (µs). Returns the µs to wait.
_TAKE_REQUEST = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local due = tonumber(redis.call('get', KEYS[1]) or '0')
if due < now then due = now end
due = due + tonumber(ARGV[1])
local wait = due - tonumber(ARGV[2]) - now
if wait > 0 then return wait end
redis.call('set', KEYS[1], string.format('%d', due), 'px', math.max(1, math.ceil((due - now) / 1000)))
return 0
"""
# KEYS: the principal's slots. ARGV: the run, the lease (ms), the limit. 1: held.
_TAKE_RUN = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if not redis.call('zscore', KEYS[1], ARGV[1]) then
  if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
end
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
"""
# KEYS: the principal's slots. ARGV: the lease (ms), the runs still held.
_REFRESH_RUNS = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('zadd', KEYS[1], 'xx', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
"""


class RedisQuotaStore:
    """The counters in Redis under ``<prefix>:quotas:``, shared by every replica.

    Each operation has ``timeout`` seconds, retries included; a failure raises
    (the guard lets the request through: an outage of the store does not stop
    the service).
    """

    def __init__(self, client: Redis, *, timeout: float, prefix: str = "agenthost") -> None:
        self.client = client
        self.timeout = timeout
        self.prefix = f"{prefix}:quotas:"
        self._take_request = client.register_script(_TAKE_REQUEST)
        self._take_run = client.register_script(_TAKE_RUN)
        self._refresh_runs = client.register_script(_REFRESH_RUNS)
        self._held: dict[str, set[str]] = {}  # principal → the slots this process holds
        self._refresher: asyncio.Task[None] | None = None

    def _key(self, principal: str, what: str) -> str:
        return f"{self.prefix}{{{quote(principal, safe='')}}}:{what}"

    async def take_request(self, principal: str, rate: int) -> float:
        interval = max(1, int(PERIOD * 1_000_000 / rate))
        async with asyncio.timeout(self.timeout):
            wait = await self._take_request(
                [self._key(principal, "rate")], [interval, int(PERIOD * 1_000_000)]
            )
        return int(wait) / 1_000_000

    async def take_run(self, principal: str, limit: int, run: str) -> bool:
        async with asyncio.timeout(self.timeout):
            held = await self._take_run(
                [self._key(principal, "runs")], [run, int(RUN_LEASE * 1000), limit]
            )
        if held:
            self._held.setdefault(principal, set()).add(run)
            if self._refresher is None:
                self._refresher = asyncio.create_task(self._refresh(), name="quota-run-leases")
        return bool(held)

    async def give_back_run(self, principal: str, run: str) -> None:
        runs = self._held.get(principal)
        if runs is not None:
            runs.discard(run)
            if not runs:
                del self._held[principal]
        async with asyncio.timeout(self.timeout):
            await self.client.zrem(self._key(principal, "runs"), run)

    async def _refresh(self) -> None:
        """Every third of the lease, extend the leases of the slots this process holds."""
        while True:
            await asyncio.sleep(RUN_LEASE / 3)
            for principal, runs in list(self._held.items()):
                with contextlib.suppress(Exception):  # the next round tries again
                    async with asyncio.timeout(self.timeout):
                        await self._refresh_runs(
                            [self._key(principal, "runs")], [int(RUN_LEASE * 1000), *runs]
                        )

    async def add_tokens(self, principal: str, day: str, tokens: int) -> None:
        key = self._key(principal, f"tokens:{day}")
        async with asyncio.timeout(self.timeout):
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.incrby(key, tokens)
                pipe.expire(key, 2 * DAY_SECONDS)
                await pipe.execute()

    async def tokens_used(self, principal: str, day: str) -> int:
        async with asyncio.timeout(self.timeout):
            used = await self.client.get(self._key(principal, f"tokens:{day}"))
        return int(used or 0)

    async def aclose(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        await self.client.aclose()
