"""IBM ACP runs across replicas: snapshots in the shared store, cancels by message.

With a shared session store (Redis), every run is also kept there as a
snapshot: its ``Run`` (status, output, await request), its session key,
the tool calls it waits on and its events so far; once the run settled,
its ``Run`` only in its last event (``run`` is null: a snapshot written
before repeated it). A settled run whose snapshot is written is not kept
in the replica's own run store (:class:`~agenthost.adapters.acp.runs.RunStore`):
every replica reads it here. The snapshot is written
when the run is created and whenever its status changes, so any replica can
read a run, list its events, resume an ``awaiting`` run (the resuming
replica runs it from then on) or cancel it. A cancel of a run that works on
another replica goes over the cross-replica cancel channel
(:mod:`agenthost.adapters.cancels`); the replica running it cancels its
task, which stops the model call and the tools, and writes the
``cancelled`` snapshot.

While a run works, its snapshot is also written each
:data:`SNAPSHOT_SECONDS` in which it had new events (its text parts): a
client on another replica follows a ``stream`` run by reading its events
(``GET /runs/{id}/events``, acp-sdk's ``run_events``) and status, at most
that far behind the stream itself.

The replica running a run holds its lease (:mod:`agenthost.adapters.leases`)
while the run works; a run read as working whose lease has expired was
left by a replica that died, and is recorded ``failed`` by the reader,
unless it is a durable run (``async`` and ``stream`` runs: their snapshot
says ``durable``), which another replica takes over and finishes
(:mod:`agenthost.adapters.acp.detached`).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import orjson
from acp_sdk.models import Error, Run, RunFailedEvent, RunStatus

from agenthost.adapters.acp.event_log import EventLog
from agenthost.adapters.acp.runs import RunRecord
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.cancels import CancelChannel, Stop, is_shared
from agenthost.adapters.leases import Leases
from agenthost.agents import MemoryManager, SessionKey, ToolCallPart
from agenthost.agents.cancelling import cancel_and_wait
from agenthost.agents.errors import StoreUnavailable

NAMESPACE = "acp-runs"
_RUN = "run"  # the SessionKey.agent of every snapshot
SNAPSHOT_SECONDS = 0.25
"""How far behind its stream a working run's shared events may be."""
WORKING = (RunStatus.CREATED, RunStatus.IN_PROGRESS, RunStatus.CANCELLING)
ORPHANED = (
    "the replica running this run stopped before the run ended (its lease expired); "
    "start the run again"
)


class SharedRuns:
    """Run snapshots in ``memory`` and the cancel messages between replicas."""

    def __init__(self, memory: MemoryManager, cancels: CancelChannel, leases: Leases) -> None:
        self.memory = memory
        self.cancels = cancels
        self.leases = leases

    @classmethod
    def of(cls, context: AdapterContext, lease_seconds: float) -> SharedRuns | None:
        """Shared runs when the context's store is shared by replicas; else None."""
        if not is_shared(context.memory) or context.new_memory is None:
            return None
        memory = context.new_memory(NAMESPACE)
        cancels = CancelChannel.of(memory, "acp")
        leases = Leases.of(memory, "acp", lease_seconds)
        if cancels is None or leases is None:
            return None
        return cls(memory, cancels, leases)

    @asynccontextmanager
    async def working(self, record: RunRecord) -> AsyncIterator[None]:
        """While inside (its work runs here): hold the run's lease, and share its progress."""
        async with self.leases.held(record.principal, record.run_id):
            stop = asyncio.Event()
            progress = asyncio.create_task(self._share_progress(record, stop))
            try:
                yield
            finally:
                stop.set()
                await cancel_and_wait(progress)

    async def _share_progress(self, record: RunRecord, stop: asyncio.Event) -> None:
        # The stop flag, not the cancel alone, ends the loop (as Leases.held's): a cancel
        # that lands as a store write completes is lost in Python 3.11's asyncio.wait_for,
        # which redis-py sends every command through; the loop then went on for ever, and
        # the run, awaiting it here, never ended (a taken-over run stayed in progress).
        saved = len(record.events)
        while not stop.is_set():
            await asyncio.sleep(SNAPSHOT_SECONDS)
            if stop.is_set():
                return
            if len(record.events) != saved:
                saved = len(record.events)
                with suppress(StoreUnavailable):  # the next status change retries
                    await self.save(record)

    async def save(self, record: RunRecord) -> None:
        """Write the run's snapshot (with a fresh lease first while it works here)."""
        if record.busy and not record.settled:
            await self.leases.take(record.principal, record.run_id)
        count = len(record.events)
        snapshot: dict[str, Any] = {
            # A settled run is in its last event (run.completed, .awaiting, ...): not
            # twice (null, as an earlier snapshot's field is overwritten, not removed).
            "run": None if record.in_log else orjson.loads(record.run_json()),
            "session": [record.session.agent, record.session.session, record.session.principal],
            "pending": [call.model_dump() for call in record.pending],
            "durable": record.durable,
            # The log deflated, in base64 (ASCII: one byte a character as JSON
            # and in Redis); snapshots written before kept "events", a JSON array.
            "packed_events": base64.b64encode(record.events.packed_bytes).decode(),
        }
        key = SessionKey(_RUN, record.run_id, record.principal)
        await self.memory.append(key, (), meta=snapshot)
        if record.settled:
            record.saved = count

    async def load(self, principal: str, run_id: str) -> RunRecord | None:
        stored = await self.memory.get(SessionKey(_RUN, run_id, principal))
        if stored is None or "session" not in stored.meta:
            return None
        meta = stored.meta
        run = meta.get("run")
        record = RunRecord(
            None if run is None else Run.model_validate(run),
            principal,
            SessionKey(*meta["session"]),
            events=_events_of(meta),
            pending=[ToolCallPart.model_validate(call) for call in meta["pending"]],
            durable=meta.get("durable", False),
        )
        if record.settled:
            record.saved = len(record.events)  # what the store holds
        return record

    async def fail_if_orphaned(self, record: RunRecord) -> RunRecord:
        """``record`` (read from the store), ``failed`` if the replica running it died.

        A run read as working whose lease expired lost its replica: it is
        recorded ``failed`` (a retryable ``server_error``) for every replica. A
        durable run is not: another replica claims it and goes on with it
        (:mod:`agenthost.adapters.acp.detached`).
        """
        if record.run.status not in WORKING or record.durable:
            return record
        id = record.run_id
        if await self.leases.alive(record.principal, id):
            return record
        latest = await self.load(record.principal, id)  # it may have just ended
        if latest is None or latest.run.status not in WORKING:
            return latest or record
        latest.run.error = Error(code="server_error", message=ORPHANED)
        latest.settle(RunStatus.FAILED)
        latest.emit(RunFailedEvent(run=latest.run))
        await self.save(latest)
        return latest

    async def cancel(self, principal: str, run_id: str) -> None:
        """Ask the replica running the run to cancel it."""
        await self.cancels.send(principal, run_id)

    async def listen(self, cancel: Stop) -> None:
        """Call ``cancel(principal, run id)`` for every cancel sent, until cancelled."""
        await self.cancels.listen(cancel)


def _events_of(snapshot: dict[str, Any]) -> EventLog:
    """A snapshot's event log: deflated (``packed_events``) or, written before, a JSON array."""
    if "packed_events" in snapshot:
        return EventLog.from_packed(base64.b64decode(snapshot["packed_events"]))
    return EventLog(orjson.dumps(event) for event in orjson.loads(snapshot["events"]))
