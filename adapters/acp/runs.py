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
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from acp_sdk.models import Event, Run, RunStatus

from agenthost.agents import SessionKey, ToolCallPart

_HAS_TASK = (RunStatus.CREATED, RunStatus.IN_PROGRESS, RunStatus.CANCELLING)
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(eq=False)
class RunRecord:
    """A run, the principal that owns it, its session and its event log (as JSON)."""

    run: Run
    principal: str
    session: SessionKey
    events: list[bytes] = field(default_factory=list)
    pending: list[ToolCallPart] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    idle_since: float = field(default_factory=time.monotonic)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _bytes: int = 0  # of the event log so far

    @property
    def held_bytes(self) -> int:
        """What the record holds: its event log (the output is in its last events)."""
        return self._bytes

    @property
    def busy(self) -> bool:
        """The run has work going on (its task is running)."""
        return self.task is not None and not self.task.done()

    def emit(self, event: Event) -> None:
        """Append an event (a snapshot: later changes to the run are not in it)."""
        self.events.append(event.model_dump_json().encode())
        self._bytes += len(self.events[-1])
        self._changed.set()
        self._changed = asyncio.Event()

    def settle(self, status: RunStatus) -> None:
        """Set a status after which the run holds no task (terminal or awaiting)."""
        self.run.status = status
        if status.is_terminal:
            self.run.finished_at = datetime.now(UTC)
        self.idle_since = time.monotonic()

    async def follow(self, start: int) -> AsyncIterator[bytes]:
        """The events from index ``start`` on, as they come, until the run stops."""
        index = start
        while True:
            changed = self._changed
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.run.status not in _HAS_TASK:
                return
            await changed.wait()

    async def finished(self) -> None:
        """Wait until the run's task is done (the run ended or awaits its client).

        Leaving this wait does not cancel the task, and a task that ended
        cancelled does not raise here.
        """
        if self.task is not None:
            await asyncio.wait([self.task])


class RunStore:
    """Runs by ``(principal, id)``, at most ``max_runs`` of them beside the busy ones.

    Idle runs (finished or awaiting) go oldest first when there is no room
    (more than ``max_runs``, or their bytes over ``max_bytes``), and once
    idle longer than ``ttl``; a busy run is never dropped. Adding a run
    costs O(runs): the bytes are summed over the records, each kept by its
    record. ``evictions`` counts the runs dropped.
    """

    def __init__(self, *, max_runs: int, ttl: float, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_runs = max_runs
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.evictions = 0
        self._runs: OrderedDict[tuple[str, str], RunRecord] = OrderedDict()

    def add(self, record: RunRecord) -> None:
        self._prune()
        self._runs[(record.principal, str(record.run.run_id))] = record

    def get(self, principal: str, run_id: str) -> RunRecord | None:
        try:
            key = (principal, str(uuid.UUID(run_id)))
        except ValueError:
            return None
        record = self._runs.get(key)
        if record is not None and self._expired(record, time.monotonic()):
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
        for key, record in self._runs.items():  # oldest first
            if record.busy:
                continue
            if excess <= 0 and over <= 0 and not self._expired(record, now):
                break  # younger runs follow; get() still checks each one's age
            stale.append(key)
            excess -= 1
            over -= record.held_bytes
        for key in stale:
            del self._runs[key]
        self.evictions += len(stale)
