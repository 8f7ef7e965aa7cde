"""The run log: a record per run and its ordered events, in this process or shared.

:class:`RunRecord` is what a replica needs to run a run again (the protocol's
own request, opaque here) and where it stands (status, error). The events
are the run's updates, numbered from 0 (``seq``) in the order they happened.
A :class:`RunLog` keeps both:

- :class:`LocalRunLog` (``AGENTHOST_SESSION_STORE=memory``): this process,
  bounded in bytes; the oldest settled runs are dropped past the bound, a
  run in progress never is. Leases mean nothing here: a process that dies
  takes its log with it.
- ``app/redis_runs.py`` (a Redis session store): a Redis Stream per run
  and a sorted set of live runs by lease deadline, so that any replica can
  read, follow, cancel or take over any run (see that module).

Appending is synchronous and cheap (a list append and a wake-up): the run's
hot path never waits on a store, except at :meth:`RunLog.flush`, which a run
calls at its durable points (a finished step, the end).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from agenthost.adapters.durable.events import TERMINAL, event_type

SETTLED = frozenset({"completed", "failed", "cancelled", "incomplete"})
"""Statuses of a run that will not change again."""

DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run: who started it, on which protocol, with what request, and how it stands.

    ``request`` is the protocol's own JSON: everything its handler needs to
    run the run again on any replica. ``durable`` False: the run is never
    resumed; a dead replica's run fails instead.
    """

    id: str
    protocol: str
    agent: str
    principal: str
    request: dict[str, Any]
    status: str = "queued"
    durable: bool = True
    created_at: float = field(default_factory=time.time)
    error: dict[str, Any] | None = None
    attempt: int = 0
    """How many times the run was taken over after its replica died."""
    cancel: bool = False
    """A client asked for the run to stop (its replica stops it at the next renewal)."""

    @property
    def settled(self) -> bool:
        return self.status in SETTLED


@runtime_checkable
class RunLog(Protocol):
    """Where runs and their events are kept."""

    shared: bool
    """Whether other replicas read the same log (then leases matter)."""

    async def create(self, record: RunRecord, owner: str, seconds: float) -> None:
        """Record a new run, its lease held by ``owner`` for ``seconds``."""
        ...

    async def get(self, id: str) -> RunRecord | None: ...

    async def update(self, id: str, **changes: Any) -> None:
        """Change fields of the record (``status``, ``error``, ``attempt``)."""
        ...

    def append(self, id: str, event: bytes) -> int:
        """Add ``event`` to the run's log (buffered); its sequence number."""
        ...

    async def flush(self, id: str) -> None:
        """Return once every event appended so far is kept (shared: written)."""
        ...

    async def events(self, id: str, after: int = -1) -> list[tuple[int, bytes]]:
        """The events recorded after ``after`` (a sequence number), in order."""
        ...

    async def wait(self, id: str, after: int, seconds: float) -> list[tuple[int, bytes]]:
        """The events after ``after``, waiting up to ``seconds`` for one to come."""
        ...

    async def claim(self, id: str, owner: str, seconds: float) -> bool:
        """Take the lease of a run whose lease expired; True for exactly one claimer."""
        ...

    async def renew(self, id: str, owner: str, seconds: float) -> bool:
        """Extend ``owner``'s lease; False when the lease is no longer its."""
        ...

    async def release(self, id: str, owner: str, *, settled: bool) -> None:
        """Give the lease up: the run is over, or (not settled) another replica may take it."""
        ...

    async def orphans(self) -> list[str]:
        """Runs in progress whose lease expired (their replica died, or handed them over)."""
        ...

    async def recent(self, principal: str, agent: str, limit: int = 50) -> list[RunRecord]:
        """``principal``'s latest runs of ``agent`` (kept ones), newest first."""
        ...

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...


class _Run:
    __slots__ = ("events", "record", "size", "woken")

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.events: list[bytes] = []
        self.size = 512  # the record's own share, roughly
        self.woken: asyncio.Event | None = None


class LocalRunLog:
    """Runs of this process, bounded in bytes (settled runs dropped oldest first)."""

    shared = False

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.dropped = 0
        self._runs: OrderedDict[str, _Run] = OrderedDict()

    async def create(self, record: RunRecord, owner: str = "", seconds: float = 0.0) -> None:
        self.add(record)

    def __contains__(self, id: str) -> bool:
        return id in self._runs

    def count(self, id: str) -> int:
        """How many events run ``id`` has here (0 when it is not kept)."""
        run = self._runs.get(id)
        return len(run.events) if run is not None else 0

    def drop(self, id: str) -> None:
        """Forget run ``id`` (another replica runs it now)."""
        run = self._runs.pop(id, None)
        if run is not None:
            self.bytes -= run.size

    def add(self, record: RunRecord) -> None:
        run = self._runs[record.id] = _Run(record)
        self.bytes += run.size
        self._bound()

    async def get(self, id: str) -> RunRecord | None:
        run = self._runs.get(id)
        return run.record if run is not None else None

    async def update(self, id: str, **changes: Any) -> None:
        run = self._runs.get(id)
        if run is not None:
            run.record = replace(run.record, **changes)
            if run.record.settled:
                self._runs.move_to_end(id)  # dropped last among the settled
                self._bound()

    def append(self, id: str, event: bytes) -> int:
        run = self._runs[id]
        run.events.append(event)
        run.size += len(event) + 64
        self.bytes += len(event) + 64
        if run.woken is not None:
            run.woken.set()
            run.woken = None
        return len(run.events) - 1

    async def flush(self, id: str) -> None:
        return None

    async def events(self, id: str, after: int = -1) -> list[tuple[int, bytes]]:
        run = self._runs.get(id)
        if run is None:
            return []
        return [(seq, run.events[seq]) for seq in range(after + 1, len(run.events))]

    async def wait(self, id: str, after: int, seconds: float) -> list[tuple[int, bytes]]:
        """As :meth:`RunLog.wait`; a run in progress here always ends (its run bound),
        and its end wakes every follower, so no time-out is needed (a timer per chunk
        costs a few µs)."""
        run = self._runs.get(id)
        if run is None:
            return []
        if len(run.events) <= after + 1 and not _ended(run.events):
            if run.woken is None:
                run.woken = asyncio.Event()
            await run.woken.wait()
        return [(seq, run.events[seq]) for seq in range(after + 1, len(run.events))]

    async def claim(self, id: str, owner: str, seconds: float) -> bool:
        return False  # one process: a run's owner is this process, for as long as it lives

    async def renew(self, id: str, owner: str, seconds: float) -> bool:
        return True

    async def release(self, id: str, owner: str, *, settled: bool) -> None:
        return None

    async def orphans(self) -> list[str]:
        return []

    async def recent(self, principal: str, agent: str, limit: int = 50) -> list[RunRecord]:
        found = []
        for run in reversed(self._runs.values()):
            record = run.record
            if record.principal == principal and record.agent == agent:
                found.append(record)
        found.sort(key=lambda r: r.created_at, reverse=True)
        return found[:limit]

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def _bound(self) -> None:
        if self.bytes <= self.max_bytes:
            return
        for id in [id for id, run in self._runs.items() if run.record.settled]:
            run = self._runs.pop(id)
            self.bytes -= run.size
            self.dropped += 1
            if self.bytes <= self.max_bytes:
                return


def _ended(events: list[bytes]) -> bool:
    return bool(events) and event_type(events[-1]) in TERMINAL
