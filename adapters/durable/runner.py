"""Detached runs: started by one request, followed by any, taken over when their replica dies.

:class:`DurableRuns` is one per server, shared by every protocol. A protocol
registers a :class:`RunKind` (how to start its agent run from a
:class:`~agenthost.adapters.durable.log.RunRecord`, and what to keep when the
run settles), then :meth:`DurableRuns.start` runs a record in a task of its
own, writing every update to the log. Clients read the run through
:meth:`DurableRuns.follow` from any position, on any replica, whether the run
is still going or long over.

With a shared log, the replica running a run holds its lease and renews it
every third of ``lease_seconds``. Every replica looks for runs whose lease
expired every ``claim_seconds`` and exactly one claims each (see
:meth:`RunLog.claim`): it reads the log, records what the dead replica's
unfinished step had streamed as discarded, and starts the agent again with
the finished steps as its input (:mod:`.steps`). A run whose record says
``durable: false`` fails instead, with a retryable error. A replica that
stops normally (SIGTERM) hands its runs over the same way at once: it
releases their leases instead of failing them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Protocol

from agenthost.adapters.durable.events import (
    CANCELLED,
    TERMINAL,
    LoggedUpdate,
    decode,
    encode,
    event_type,
    failed,
)
from agenthost.adapters.durable.log import RunLog, RunRecord
from agenthost.adapters.durable.steps import Progress
from agenthost.agents import (
    Message,
    RunCancelled,
    RunFinished,
    RunIncomplete,
    RunResult,
    RunUpdate,
    TextDelta,
)
from agenthost.agents.chat import STEP_SEPARATOR
from agenthost.agents.errors import (
    AgentError,
    RunInterrupted,
    StoreUnavailable,
    kind_of,
    message_of,
    retryable_of,
)

logger = logging.getLogger("agenthost")

FOLLOW_POLL = 5.0
"""Seconds a follower waits for an event before it checks that the run is still kept."""

ORPHANED = "the replica running this run stopped before it finished; start the run again"


class RunKind(Protocol):
    """How one protocol runs its records (registered with :meth:`DurableRuns.handle`)."""

    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        """The agent run of ``record`` (its updates, not started yet); ``done`` holds the
        messages of the steps a replica that died had finished, to be given after the
        record's own input."""
        ...

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        """Keep what the protocol keeps of a run that ended (a stored response), on
        the replica that ends it; ``error`` is None for a finished run."""
        ...


@dataclass(frozen=True, slots=True)
class Followed:
    """One event of a run as a follower reads it."""

    seq: int
    update: LoggedUpdate


class DurableRuns:
    """The detached runs of one server (see the module)."""

    def __init__(
        self,
        log: RunLog,
        *,
        lease_seconds: float = 15.0,
        claim_seconds: float | None = None,
        replica: str | None = None,
        not_durable: frozenset[str] = frozenset(),
    ) -> None:
        """``not_durable``: agents (config ``durable: false``) whose runs are recorded
        not durable: orphaned, they fail instead of resuming."""
        self.log = log
        self.lease_seconds = lease_seconds
        self.claim_seconds = claim_seconds if claim_seconds is not None else lease_seconds / 3
        self.replica = replica or uuid.uuid4().hex[:12]
        self.not_durable = not_durable
        self.kinds: dict[str, RunKind] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.live: dict[str, list[LoggedUpdate | None]] = {}
        """The updates of the runs going on here, by sequence number: followers on this
        replica take them as they are instead of decoding their events."""
        self.resumed = 0
        """Runs this replica took over from a replica that died."""
        self._stopping = False
        self._lost: set[str] = set()  # runs whose lease another replica took (paused here)
        self._cancelling: set[str] = set()  # runs a client asked to stop
        self._settling: set[asyncio.Task[None]] = set()

    def handle(self, protocol: str, kind: RunKind) -> None:
        self.kinds[protocol] = kind

    # -- starting and following ------------------------------------------------------------

    async def start(self, record: RunRecord) -> None:
        """Record ``record`` and run it in a task of its own (this replica holds its lease)."""
        if record.agent in self.not_durable:
            record = replace(record, durable=False)
        await self.log.create(record, self.replica, self.lease_seconds)
        self._spawn(record, Progress())

    def _spawn(self, record: RunRecord, progress: Progress) -> None:
        task = asyncio.create_task(self._drive(record, progress), name=f"run-{record.id}")
        self.tasks[record.id] = task

        def done(task: asyncio.Task[None]) -> None:
            self.tasks.pop(record.id, None)
            self.live.pop(record.id, None)
            if task.cancelled() and record.id in self._cancelling:
                # Cancelled before its first line ran: nothing settled it yet.
                self._settling.add(asyncio.create_task(self._settle_cancelled(record)))
            self._cancelling.discard(record.id)

        task.add_done_callback(done)

    async def follow(self, id: str, after: int = -1) -> AsyncIterator[Followed]:
        """The run's events after ``after``, then as they come, until it ends (raising
        its error if it failed); a run no longer kept raises :class:`RunIncomplete`."""
        async for seq, raw in self.events(id, after):
            update = decode(raw)  # a failed run's event raises its error
            if update is not None:
                yield Followed(seq, update)

    async def events(self, id: str, after: int = -1) -> AsyncIterator[tuple[int, bytes]]:
        """The run's events as its log keeps them (JSON), after ``after``, then as they
        come, until the one that ends it."""
        while True:
            batch = await self.log.wait(id, after, FOLLOW_POLL)
            if not batch:
                record = await self.log.get(id)
                if record is None:
                    raise RunIncomplete(f"run {id!r} is no longer kept")
                if record.settled and not await self.log.events(id, after):
                    return
                continue
            for seq, raw in batch:
                after = seq
                yield seq, raw
                if event_type(raw) in TERMINAL:
                    return

    async def updates(self, id: str, after: int = -1) -> AsyncIterator[LoggedUpdate]:
        """:meth:`follow` without the sequence numbers: the updates as the run made them
        (a run going on here: the very objects, none decoded)."""
        live = self.live.get(id)
        while True:
            batch = await self.log.wait(id, after, FOLLOW_POLL)
            if not batch:
                record = await self.log.get(id)
                if record is None:
                    raise RunIncomplete(f"run {id!r} is no longer kept")
                if record.settled and not await self.log.events(id, after):
                    return
                live = self.live.get(id)
                continue
            for seq, raw in batch:
                after = seq
                update = live[seq] if live is not None and seq < len(live) else None
                if update is not None:
                    yield update
                    continue
                ended = event_type(raw) in TERMINAL
                decoded = decode(raw)  # a failed run's event raises its error
                if decoded is not None:
                    yield decoded
                if ended:
                    return

    async def cancel(self, id: str) -> bool:
        """Ask for the run to stop; True when it runs here (stopped now), False when
        another replica runs it (it stops at its next lease renewal)."""
        task = self.tasks.get(id)
        if task is not None:
            self._cancelling.add(id)
            task.cancel()
            return True
        await self.log.update(id, cancel=True)
        return False

    # -- running ---------------------------------------------------------------------------

    def _append(self, id: str, update: LoggedUpdate, live: list[LoggedUpdate | None]) -> None:
        """Log ``update``, and keep it as it is for the followers on this replica."""
        seq = self.log.append(id, encode(update))
        if len(live) < seq:  # events before this replica ran it (a resumed run)
            live.extend([None] * (seq - len(live)))
        live.append(update)

    async def _drive(self, record: RunRecord, progress: Progress) -> None:
        kind = self.kinds[record.protocol]
        log, id = self.log, record.id
        result: RunResult | None = None
        error: BaseException | None = None
        renewal = asyncio.create_task(self._renew(record), name=f"lease-{id}")
        separate = bool(progress.texts)
        # What an earlier attempt finished: this attempt's result lacks only that text
        # (the steps it finishes itself are in its result already).
        earlier = list(progress.texts)
        try:  # from here on, however the run ends (a cancel at once too), it is settled
            await log.update(id, status="in_progress")
            updates = await kind.updates(record, list(progress.messages))
            live = self.live[id] = []
            try:
                async for update in updates:
                    if isinstance(update, TextDelta) and separate:
                        separate = False
                        if not update.text.startswith(STEP_SEPARATOR):
                            self._append(id, TextDelta(STEP_SEPARATOR), live)
                    if isinstance(update, RunFinished):
                        result = _whole(update.result, earlier)
                        break
                    self._append(id, update, live)
                    if progress.add(update):
                        await log.flush(id)  # a finished step is kept before the next one
            finally:
                await updates.aclose()
            if result is None:
                raise RunIncomplete(f"agent {record.agent!r} ended without a result")
        except asyncio.CancelledError:
            if id in self._lost:  # another replica owns it now: leave its record alone
                self._lost.discard(id)
                renewal.cancel()
                raise
            if self._stopping and log.shared:
                await self._hand_over(record, renewal)
                raise
            error = RunCancelled("the run was cancelled")
        except RunInterrupted as exc:
            if log.shared:
                await self._hand_over(record, renewal)
                return
            error = exc
        except Exception as exc:
            error = exc
        await self._settle(record, kind, result, error, renewal)

    async def _settle(
        self,
        record: RunRecord,
        kind: RunKind,
        result: RunResult | None,
        error: BaseException | None,
        renewal: asyncio.Task[None],
    ) -> None:
        log, id = self.log, record.id
        renewal.cancel()
        try:
            await kind.settled(record, result, error)
        except Exception as exc:
            logger.warning("run %s: keeping its outcome failed: %s", id, exc)
            result, error = None, exc
        if result is not None:
            log.append(id, encode(RunFinished(result)))
            status, detail = "completed", None
        elif isinstance(error, RunCancelled):
            log.append(id, CANCELLED)
            status, detail = "cancelled", None
        else:
            assert error is not None
            log.append(id, failed(error))
            status, detail = "failed", _error(error)
        with suppress(StoreUnavailable):
            await log.flush(id)
            await log.update(id, status=status, error=detail)
            await log.release(id, self.replica, settled=True)

    async def _settle_cancelled(self, record: RunRecord) -> None:
        renewal = asyncio.create_task(asyncio.sleep(0))
        kind = self.kinds.get(record.protocol) or _NoKind()
        try:
            await self._settle(record, kind, None, RunCancelled("the run was cancelled"), renewal)
        finally:
            self._settling.discard(asyncio.current_task())

    async def _hand_over(self, record: RunRecord, renewal: asyncio.Task[None]) -> None:
        """This replica stops: its run goes on elsewhere (the lease released, not failed)."""
        renewal.cancel()
        with suppress(StoreUnavailable):
            await self.log.flush(record.id)
            await self.log.release(record.id, self.replica, settled=False)
        logger.info("run %s handed over to another replica", record.id)

    async def _renew(self, record: RunRecord) -> None:
        if not self.log.shared:
            return
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                mine = await self.log.renew(record.id, self.replica, self.lease_seconds)
                current = await self.log.get(record.id)
            except StoreUnavailable:
                continue
            task = self.tasks.get(record.id)
            if task is None:
                return
            if not mine:
                logger.warning("run %s: its lease was taken over; stopping it here", record.id)
                self._lost.add(record.id)
                task.cancel()
                return
            if current is not None and current.cancel:
                task.cancel()
                return

    # -- taking over -----------------------------------------------------------------------

    async def claim_orphans(self) -> int:
        """Claim and resume every run whose lease expired; how many this replica took."""
        taken = 0
        for id in await self.log.orphans():
            if id in self.tasks or not await self.log.claim(id, self.replica, self.lease_seconds):
                continue
            record = await self.log.get(id)
            if record is None or record.settled:
                await self.log.release(id, self.replica, settled=True)
                continue
            taken += 1
            await self._resume(record)
        return taken

    async def _resume(self, record: RunRecord) -> None:
        kind = self.kinds.get(record.protocol)
        events = await self.log.events(record.id)
        updates: list[LoggedUpdate] = []
        for _, raw in events:
            with suppress(AgentError):
                if (update := decode(raw)) is not None:
                    updates.append(update)
        progress = Progress.of(updates)
        if not record.durable or kind is None:
            error = RunInterrupted(ORPHANED)
            renewal = asyncio.create_task(asyncio.sleep(0))
            await self._settle(record, kind or _NoKind(), None, error, renewal)
            return
        lost = progress.lost()
        if lost is not None:
            self.log.append(record.id, encode(lost))
            progress.add(lost)
        await self.log.update(record.id, attempt=record.attempt + 1)
        self.resumed += 1
        logger.info(
            "run %s resumed here after its replica stopped (%d finished steps kept)",
            record.id,
            len(progress.messages) // 2,
        )
        self._spawn(record, progress)

    async def watch(self) -> None:
        """Claim orphaned runs every ``claim_seconds``, until cancelled."""
        if not self.log.shared:
            return
        while True:
            await asyncio.sleep(self.claim_seconds)
            try:
                await self.claim_orphans()
            except StoreUnavailable:
                continue
            except Exception:
                logger.exception("claiming orphaned runs failed")

    async def stop(self, grace: float) -> None:
        """This replica stops: with a shared log its runs are handed over at once (another
        replica resumes them); in this process they get ``grace`` seconds to end."""
        self._stopping = True
        tasks = list(self.tasks.values())
        if not tasks:
            return
        if not self.log.shared:
            await asyncio.wait(tasks, timeout=grace)
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=max(grace, 1.0))


class _NoKind:
    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        raise AssertionError("never run")

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        return None


def _whole(result: RunResult, earlier: list[str]) -> RunResult:
    """A resumed run's result with the text of the steps finished before it."""
    if not earlier:
        return result
    texts = [*earlier, result.output] if result.output else earlier
    result.output = STEP_SEPARATOR.join(texts)
    return result


def _error(exc: BaseException) -> dict[str, object]:
    return {"message": message_of(exc), "kind": kind_of(exc).value, "retryable": retryable_of(exc)}
