"""ACP runs: one record per run, its event log, and the bounded store of them.

A run's work is one asyncio task driving the agent's stream into the run's
event log; every mode reads that log (``sync`` waits for the task, ``stream``
follows the log as it grows, ``async`` returns at once), so cancelling the
task stops the model call and the tools whatever the mode. A run that ends
waiting for its client (``awaiting``) holds no task until it is resumed.

Records are keyed by ``(principal, run id)``: another API key's run answers
as an unknown one. Idle runs (finished or awaiting) expire by count, bytes
(their event logs and output, as JSON) and age.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import orjson
from acp_sdk.models import (
    Event,
    Run,
    RunAwaitingEvent,
    RunCancelledEvent,
    RunCompletedEvent,
    RunFailedEvent,
    RunStatus,
)

from agenthost.adapters.acp.event_log import EventLog
from agenthost.adapters.handoffs import HandOff
from agenthost.agents import SessionKey, ToolCallPart

_HAS_TASK = (RunStatus.CREATED, RunStatus.IN_PROGRESS, RunStatus.CANCELLING)
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_SETTLED_EVENTS = (RunAwaitingEvent, RunCancelledEvent, RunCompletedEvent, RunFailedEvent)
_RUN_KEY = b'"run":'
_RUN_SERIALIZER = Run.__pydantic_serializer__


class RunRecord:
    """A run, the principal that owns it, its session and its event log (as JSON).

    Once the run settles (ends or awaits its client) its log is packed
    (:class:`EventLog`), its finished task let go and its ``Run`` dropped:
    the log's last event holds the run as it settled, and :attr:`run`
    rebuilds it from there when it is asked for (to change it, or to resume
    it). A wake-up event for followers exists only while one waits.
    """

    __slots__ = (
        "_changed",
        "_run",
        "durable",
        "events",
        "hand_off",
        "idle_since",
        "pending",
        "principal",
        "run_id",
        "saved",
        "session",
        "task",
    )

    def __init__(
        self,
        run: Run | None,
        principal: str,
        session: SessionKey,
        events: EventLog | None = None,
        pending: Sequence[ToolCallPart] = (),
        *,
        durable: bool = False,
    ) -> None:
        self._run: Run | None = run
        self.events = EventLog() if events is None else events
        """Without ``run``: the events of a settled run (its last event holds the run)."""
        run_id = run.run_id if run is not None else orjson.loads(self.run_json())["run_id"]
        self.run_id = str(run_id)
        """The run's id (as ``str(run.run_id)``: it never changes)."""
        self.principal = principal
        self.session = session
        self.pending = pending
        self.task: asyncio.Task[None] | None = None
        self.durable = durable
        """Its work is a durable run (:mod:`agenthost.adapters.acp.detached`): when its
        replica dies, another one goes on with it."""
        self.idle_since = time.monotonic()
        self.hand_off: HandOff | None = None
        """Between the run and the ``stream`` request reading it live: the run waits while
        that stream lags (:meth:`room`); None when no stream reads it."""
        self._changed: asyncio.Event | None = None  # set on the next event; made by a follower
        self.saved = -1
        """How many events the run had when its settled snapshot was last written to the
        shared store (-1: none): while it still has that many, the store holds it whole."""

    @property
    def run(self) -> Run:
        """The run (rebuilt from its last event if it was dropped when it settled)."""
        if self._run is None:
            self._run = Run.model_validate_json(self.run_json())
        return self._run

    @run.setter
    def run(self, run: Run) -> None:
        self._run = run

    def run_json(self) -> bytes:
        """The run as JSON (``Run.model_dump_json``), without rebuilding a dropped one."""
        if self._run is not None:
            return _RUN_SERIALIZER.to_json(self._run)
        last = self.events.last()
        prefix = last.index(_RUN_KEY) + len(_RUN_KEY)
        return last[prefix:-1]  # {"type":"run.<status>","run":<the run>}

    @property
    def settled(self) -> bool:
        """The run ended or awaits its client (its work holds no task)."""
        return self._run is None or self._run.status not in _HAS_TASK

    @property
    def in_log(self) -> bool:
        """The run is held by its last event only (it settled; :meth:`run_json` reads it there)."""
        return self._run is None

    @property
    def kept_elsewhere(self) -> bool:
        """The run settled and its snapshot since then is in the shared store: this
        replica need not keep it (every replica reads it there)."""
        return self.settled and not self.busy and self.saved == len(self.events)

    @property
    def held_bytes(self) -> int:
        """What the record holds: its event log as JSON (the output is in its last events)."""
        return self.events.json_bytes

    @property
    def busy(self) -> bool:
        """The run has work going on (its task is running)."""
        return self.task is not None and not self.task.done()

    def work(self, task: asyncio.Task[None]) -> None:
        """Run ``task`` as the run's work; the record lets it go once it is done."""
        self.task = task
        task.add_done_callback(self._let_go)

    def _let_go(self, task: asyncio.Task[None]) -> None:
        if self.task is task:  # a finished task (and its context) is not kept
            self.task = None

    def emit(self, event: Event) -> None:
        """Append an event (a snapshot: later changes to the run are not in it)."""
        json = event.__pydantic_serializer__.to_json(event)
        self.events.append(json)
        if self.hand_off is not None:
            self.hand_off.handed(len(json))
        if self.settled and isinstance(event, _SETTLED_EVENTS):
            # No event follows until a resume or a cancel, and this one holds the run.
            self.events.pack()
            self._run = None
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def adopt(self, stored: RunRecord) -> None:
        """Take the run, events and pending calls of ``stored`` (its shared snapshot)."""
        self._run, self.events, self.pending = stored._run, stored.events, stored.pending
        self.durable = stored.durable
        self.saved = stored.saved
        if self.settled:
            self.events.pack()

    def settle(self, status: RunStatus) -> None:
        """Set a status after which the run holds no task (terminal or awaiting)."""
        self.run.status = status
        if status.is_terminal:
            self.run.finished_at = datetime.now(UTC)
        self.idle_since = time.monotonic()

    async def room(self) -> None:
        """Wait while the stream reading the run live lags (the run's log keeps growing
        without one: an ``async`` run, a stream that is gone)."""
        if self.hand_off is not None:
            await self.hand_off.room()

    async def follow(self, start: int) -> AsyncIterator[bytes]:
        """The events from index ``start`` on, as they come, until the run stops."""
        index = start
        while True:
            if index < len(self.events):
                for event in self.events.since(index):
                    index += 1
                    yield event
                continue  # more may have come while the client read these
            if self.settled:
                return
            if self._changed is None:  # no await since the checks: no event is missed
                self._changed = asyncio.Event()
            await self._changed.wait()

    async def finished(self) -> None:
        """Wait until the run's task is done (the run ended or awaits its client).

        Leaving this wait does not cancel the task, and a task that ended
        cancelled does not raise here.
        """
        if self.task is not None:
            await asyncio.wait([self.task])


class RunStore:
    """Runs by id (answered to their principal only), at most ``max_runs`` of them beside
    the busy ones.

    Idle runs (finished or awaiting) go oldest first when there is no room
    (more than ``max_runs``, or their bytes over ``max_bytes``), and once
    idle longer than ``ttl``; a busy run is never dropped. With a shared
    store, a settled run whose snapshot is written there goes at the next
    :meth:`add` (:attr:`RunRecord.kept_elsewhere`): every replica, this one
    included, reads it from the shared store. Adding a run
    costs O(runs): the bytes are summed over the records, each kept by its
    record. ``evictions`` counts the runs dropped.
    """

    def __init__(self, *, max_runs: int, ttl: float, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_runs = max_runs
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.evictions = 0
        # Oldest first (a dict keeps insertion order); keyed by the id alone, as run ids
        # are minted here (uuid4): ~0.1 KiB a run less than an OrderedDict by (principal, id).
        self._runs: dict[str, RunRecord] = {}

    def add(self, record: RunRecord) -> None:
        self._prune()
        self._runs[record.run_id] = record

    def get(self, principal: str, run_id: str) -> RunRecord | None:
        try:
            key = str(uuid.UUID(run_id))
        except ValueError:
            return None
        record = self._runs.get(key)
        if record is None or record.principal != principal:
            return None  # another API key's run answers as an unknown one
        if self._expired(record, time.monotonic()):
            del self._runs[key]
            return None
        return record

    def busy(self) -> list[RunRecord]:
        return [record for record in self._runs.values() if record.busy]

    def __len__(self) -> int:
        return len(self._runs)

    def _expired(self, record: RunRecord, now: float) -> bool:
        return not record.busy and now - record.idle_since > self.ttl

    @property
    def held_bytes(self) -> int:
        """The bytes every record holds."""
        return sum(record.held_bytes for record in self._runs.values())

    def _prune(self) -> None:
        now = time.monotonic()
        excess = len(self._runs) - self.max_runs + 1  # room for the run being added
        over = self.held_bytes - self.max_bytes
        stale = []
        lost = 0  # dropped runs that no store keeps any more
        for key, record in self._runs.items():  # oldest first
            if record.busy:
                continue
            elsewhere = record.kept_elsewhere
            if excess <= 0 and over <= 0 and not elsewhere and not self._expired(record, now):
                break  # younger runs follow; get() still checks each one's age
            stale.append(key)
            lost += not elsewhere
            excess -= 1
            over -= record.held_bytes
        for key in stale:
            del self._runs[key]
        self.evictions += lost
