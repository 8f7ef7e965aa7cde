"""Where the quota counters of each principal live: this process, or Redis.

Three counters per principal, the same two implementations for each:

- **the request rate**, by GCRA (the generic cell rate algorithm, as
  redis-cell and go-redis' ``redis_rate`` do it): one number per principal,
  the time its next request is due ("theoretical arrival time"). ``rate``
  requests a minute may come at once, then one every ``60/rate`` s; a
  refusal knows exactly when the next one passes (its ``Retry-After``).
  A small Lua script rather than the ``limits`` package: it runs on the
  session store's own client (its pool, time-outs and retries, see
  :mod:`agenthost.app.redis_client`; ``limits`` makes a client of its own
  from a URL), keeps one key per principal (a moving window keeps a
  timestamp per request), and takes the time from Redis, so replicas with
  skewed clocks share one rate.
- **runs in progress**: a slot per run, a sorted set member scored by its
  lease's end; the holder refreshes its slots every third of the lease, so a
  replica that dies gives its slots back when their leases end.
- **model tokens per UTC day**: one counter per principal and day, kept two
  days.

A request asks for all it needs in one operation (:meth:`QuotaStore.admit`: in
Redis one script, one round trip, all of a principal's keys in one hash slot),
and is counted only if every quota lets it in. A principal of a tenant with
limits of its own asks its tenant's counters too (``tenant:NAME``, one set
shared by all the tenant's principals) in the same operation: the request
passes only if both let it in, and counts on both.

A command redis-py retries (after a connection error) may be applied twice:
a request or a few tokens counted twice errs on the side of the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from agenthost.agents.cancelling import cancel_and_wait

if TYPE_CHECKING:
    from redis.asyncio import Redis

PERIOD = 60.0
"""The rate's period, seconds."""
RUN_LEASE = 60.0
"""Seconds a run's slot is held in Redis without a refresh (a dead replica's expire)."""
DAY_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class Ask:
    """What one request asks of a principal's quotas; 0 = that quota is not checked."""

    rate: int = 0
    """Requests a minute: the request counts against it."""
    tokens: int = 0
    """Tokens of the day: the request passes only while fewer were used."""
    runs: int = 0
    """Run slots: the request holds the slot ``run`` if fewer are held."""
    run: str = ""


class QuotaStore(Protocol):
    """The counters; every method is safe to call concurrently."""

    async def admit(
        self, principal: str, day: str, ask: Ask, tenant: tuple[str, Ask] | None = None
    ) -> tuple[str, float] | None:
        """None if every quota ``ask`` names lets the request in (it then counts against
        the rate and holds its run slot); else ``(the quota, seconds until it may pass)``
        and nothing is counted. The seconds are the rate's (0 for the others).
        ``tenant``: the counters (a name) and the ask of the principal's tenant, checked and
        counted together with the principal's; a refusal of theirs is ``tenant:QUOTA``."""
        ...

    async def give_back_run(self, principal: str, run: str) -> None: ...

    async def add_tokens(self, principal: str, day: str, tokens: int) -> None: ...

    async def aclose(self) -> None: ...


class LocalQuotaStore:
    """The counters of this process only."""

    def __init__(self) -> None:
        self._due: dict[str, float] = {}  # principal → its rate's theoretical arrival time
        self._runs: Counter[str] = Counter()
        self._tokens: dict[tuple[str, str], int] = {}

    async def admit(
        self, principal: str, day: str, ask: Ask, tenant: tuple[str, Ask] | None = None
    ) -> tuple[str, float] | None:
        now = time.monotonic()
        subjects = [(principal, ask, "")] + ([(*tenant, "tenant:")] if tenant else [])
        dues = []
        for name, wanted, whose in subjects:
            refused, due = self._check(name, day, wanted, now)
            if refused is not None:
                return (whose + refused[0], refused[1])
            dues.append(due)
        for (name, wanted, _), due in zip(subjects, dues, strict=True):
            if wanted.rate:
                self._due[name] = due
            if wanted.runs:
                self._runs[name] += 1
        if len(self._due) > 10_000:  # forget principals back under their rate
            self._due = {p: t for p, t in self._due.items() if t > now}
        return None

    def _check(
        self, name: str, day: str, ask: Ask, now: float
    ) -> tuple[tuple[str, float] | None, float]:
        """(why ``name``'s counters refuse ``ask`` or None, its rate's next due time)."""
        if ask.tokens and self._tokens.get((name, day), 0) >= ask.tokens:
            return ("tokens_per_day", 0.0), 0.0
        due = 0.0
        if ask.rate:
            due = max(self._due.get(name, now), now) + PERIOD / ask.rate
            if due - PERIOD > now:
                return ("requests_per_minute", due - PERIOD - now), due
        if ask.runs and self._runs[name] >= ask.runs:
            return ("concurrent_runs", 0.0), due
        return None, due

    async def give_back_run(self, principal: str, run: str) -> None:
        self._runs[principal] -= 1
        if self._runs[principal] <= 0:
            del self._runs[principal]

    async def add_tokens(self, principal: str, day: str, tokens: int) -> None:
        key = (principal, day)
        if key not in self._tokens:  # a new day: forget the others
            self._tokens = {k: v for k, v in self._tokens.items() if k[1] == day}
        self._tokens[key] = self._tokens.get(key, 0) + tokens

    async def aclose(self) -> None:
        return None


# KEYS: per subject (the principal, then its tenant if asked), its due time, tokens of the
# day, run slots. ARGV: the rate's period (µs), the run slot ('' none), its lease (ms), then
# per subject the rate's interval (µs; 0: unchecked), the tokens' budget (0: unchecked), the
# slots' limit (0: no slot). Every subject is checked before any is counted. Returns
# {quota refused (0: none), µs to wait, the refusing subject (0-based)}.
_ADMIT = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period = tonumber(ARGV[1])
local run = ARGV[2]
local lease = tonumber(ARGV[3])
local ms = math.floor(now / 1000)
local dues = {}
for i = 0, #KEYS / 3 - 1 do
  local k, a = 3 * i, 3 + 3 * i
  local interval, budget = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local slots = tonumber(ARGV[a + 3])
  if budget > 0 and tonumber(redis.call('get', KEYS[k + 2]) or '0') >= budget then
    return {1, 0, i}
  end
  if interval > 0 then
    local due = tonumber(redis.call('get', KEYS[k + 1]) or '0')
    if due < now then due = now end
    due = due + interval
    local wait = due - period - now
    if wait > 0 then return {2, wait, i} end
    dues[i + 1] = due
  end
  if run ~= '' and slots > 0 then
    redis.call('zremrangebyscore', KEYS[k + 3], '-inf', ms)
    if not redis.call('zscore', KEYS[k + 3], run) then
      if redis.call('zcard', KEYS[k + 3]) >= slots then return {3, 0, i} end
    end
  end
end
for i = 0, #KEYS / 3 - 1 do
  local k, a = 3 * i, 3 + 3 * i
  local due = dues[i + 1]
  if due then
    local left = math.max(1, math.ceil((due - now) / 1000))
    redis.call('set', KEYS[k + 1], string.format('%d', due), 'px', left)
  end
  if run ~= '' and tonumber(ARGV[a + 3]) > 0 then
    redis.call('zadd', KEYS[k + 3], ms + lease, run)
    redis.call('pexpire', KEYS[k + 3], lease)
  end
end
return {0, 0, 0}
"""
_REFUSED = {1: "tokens_per_day", 2: "requests_per_minute", 3: "concurrent_runs"}
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

    def __init__(
        self, client: Redis, *, timeout: float, prefix: str = "agenthost", owns_client: bool = True
    ) -> None:
        """``owns_client``: :meth:`aclose` closes ``client`` (else its owner does)."""
        self.client = client
        self.owns_client = owns_client
        self.timeout = timeout
        self.prefix = f"{prefix}:quotas:"
        self._admit = client.register_script(_ADMIT)
        self._refresh_runs = client.register_script(_REFRESH_RUNS)
        self._held: dict[str, set[str]] = {}  # principal → the slots this process holds
        self._refresher: asyncio.Task[None] | None = None

    def _key(self, principal: str, what: str) -> str:
        return f"{self.prefix}{{{quote(principal, safe='')}}}:{what}"

    async def admit(
        self, principal: str, day: str, ask: Ask, tenant: tuple[str, Ask] | None = None
    ) -> tuple[str, float] | None:
        subjects = [(principal, ask)] + ([tenant] if tenant else [])
        run = next((wanted.run for _, wanted in subjects if wanted.runs), "")
        keys: list[str] = []
        args: list[int | str] = [int(PERIOD * 1e6), run, int(RUN_LEASE * 1000)]
        for name, wanted in subjects:
            keys += [self._key(name, what) for what in ("rate", f"tokens:{day}", "runs")]
            interval = max(1, int(PERIOD * 1_000_000 / wanted.rate)) if wanted.rate else 0
            args += [interval, wanted.tokens, wanted.runs]
        async with asyncio.timeout(self.timeout):
            refused, wait, whose = await self._admit(keys, args)
        if refused:
            prefix = "tenant:" if int(whose) else ""
            return (prefix + _REFUSED[int(refused)], int(wait) / 1_000_000)
        for name, wanted in subjects:
            if wanted.runs:
                self._held.setdefault(name, set()).add(run)
        if run and self._refresher is None:
            self._refresher = asyncio.create_task(self._refresh(), name="quota-run-leases")
        return None

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

    async def aclose(self) -> None:
        if self._refresher is not None:
            await cancel_and_wait(self._refresher)
        if self.owns_client:
            await self.client.aclose()
