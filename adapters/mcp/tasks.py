"""MCP tasks (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28).

A client that declares the extension (for its session, or in one request's
``_meta`` client capabilities) gets every agent call as a task: ``tools/call``
answers at once with a ``CreateTaskResult`` (``resultType: "task"``) while the
run goes on in the background, so a long run outlives the client's request
timeout. (An agent configured with ``mcp: {task_after: SECONDS}`` is run in the
call that long first: a run that ends, or asks its user, within it is answered
directly, as an ordinary or an input-required result.)

- ``tasks/get`` gives the status and, once terminal, the tool result inlined
  (``completed``; an agent failure is ``completed`` with an ``isError``
  result) or the protocol error (``failed``).
- A run that asks its user (``ask_user``, when the client declared
  elicitation) puts the task in ``input_required``: ``tasks/get`` shows one
  ``elicitation/create`` per question under ``inputRequests``; ``tasks/update``
  delivers ``inputResponses`` (a subset at a time if the client likes; keys not
  outstanding are ignored), and once every question is answered the run goes
  on with the answers (the conversation is kept in the adapter's session store).
- ``tasks/cancel`` stops the run (``cancelled``); on a terminal task it is
  the same empty acknowledgement.
- SEP-2663 removed ``tasks/list`` and ``tasks/result``: not served (-32601).
- A ``tasks/*`` request whose ``Mcp-Name`` header names another task than
  its ``taskId`` is refused with -32020 (SEP-2243's header mismatch).
- No ``notifications/tasks/status`` are sent: they are optional (clients must
  poll), and SDK 2.3's ``subscriptions/listen`` has no filter for them.

Tasks are kept per principal: another key's task is unknown, the same error
as a task that never existed. A finished task is kept ``ttl`` seconds.

**Where tasks live.** In this process by default, in a table bounded by
``max_tasks`` (the oldest finished task is dropped; when every kept task is
still running a new call runs in its request, without a task). With a session
store every replica shares (Redis), each task is a record there, so
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` work on any replica: a
cancel for a run on another replica goes over the cross-replica cancel channel
(:mod:`agenthost.adapters.cancels`), an answer that completes a task's input
resumes its run on the replica that received it.

**Where runs run.** Given the server's durable runs (``runs``, as the app
does), each round of a task is a durable run (:mod:`.task_runs`): a replica
that dies leaves it to another, which resumes it from its last finished step
and writes the task's outcome. Without (a bare store), the run is a task of
this process, and with a shared store it holds a lease
(:mod:`agenthost.adapters.leases`), so a task whose replica died reads as
``failed``. With a shared store ``max_tasks`` bounds the tasks each replica
runs at once; a finished record also goes when the store's idle TTL
(``AGENTHOST_SESSION_TTL``) passes.

The 2025-11-25 form (``params.task`` on ``tools/call``) is not served: the
SDK shapes every ``tools/call`` result of that era as a ``CallToolResult``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.jsonrpc import HEADER_MISMATCH
from pydantic import Field, TypeAdapter, ValidationError
from starlette.requests import HTTPConnection

from agenthost.adapters.cancels import CancelChannel, is_shared
from agenthost.adapters.durable import DurableRuns, RunRecord
from agenthost.adapters.leases import DEFAULT_LEASE_SECONDS, Leases
from agenthost.agents import AgentError, MemoryManager, SessionKey
from agenthost.agents.sessions import entry_lock

logger = logging.getLogger("agenthost.mcp")

EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = -32021
"""SEP-2575's Missing Required Client Capability."""
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
NAMESPACE = "mcp-tasks"
"""The shared store's namespace of task records (and the cancel channel's topic)."""
ORPHANED = "the replica running this task stopped before it ended; call the tool again"
PROTOCOL = "mcp.tasks"
"""The kind of run a task's run is, in the durable run log."""
RUN_PREFIX = "mcp-task-"


Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
Run = Callable[[], Awaitable[dict[str, Any]]]
"""A task's run: the call's result (a dumped ``CallToolResult`` or ``InputRequiredResult``)."""
Resume = Callable[[dict[str, Any]], Run | None]
"""``resume(call)``: the run of a ``tools/call`` (its params as JSON) that goes on with the
answers it carries; None when its tool is gone."""

_RESPONSE: TypeAdapter[Any] = TypeAdapter(types.InputResponse)


def negotiated(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension.

    In 2026-07-28 the SDK reads the capabilities from each request's ``_meta``
    (so one request can opt in alone); earlier, from ``initialize``.
    """
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and EXTENSION in (capabilities.extensions or {})


def task_required(tool: str) -> MCPError:
    """The error for a call of a task-only tool by a client that did not declare tasks."""
    return MCPError(
        MISSING_CAPABILITY,
        f"The tool {tool} runs only as a task: declare the {EXTENSION} extension",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _unknown(task_id: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"Unknown task: {task_id}", {"taskId": task_id})


@dataclass(slots=True)
class TaskRecord:
    """One task, as JSON values (what a shared store keeps)."""

    id: str
    principal: str
    created: str
    updated: str
    call: dict[str, Any] = field(default_factory=dict)
    """The ``tools/call`` params (name, arguments) the task runs."""
    status: Status = "working"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asked: dict[str, Any] = field(default_factory=dict)
    """``input_required``: the outstanding input requests, by key."""
    answers: dict[str, Any] = field(default_factory=dict)
    """The responses received so far for this round's input requests."""
    state: str | None = None
    """The round's ``requestState``: what its answers resume (never on the wire)."""
    round: int = 0
    finished_at: float | None = None  # epoch seconds

    def touch(self, status: Status) -> None:
        self.status = status
        self.updated = _now()
        if status in TERMINAL:
            self.finished_at = time.time()


Change = Callable[[TaskRecord], bool]
"""Mutates a record in place; whether it changed (then it is written back)."""


class LocalRecords:
    """Task records in this process, bounded: the oldest finished dropped first."""

    def __init__(self, max_tasks: int, ttl: float) -> None:
        self.max_tasks = max_tasks
        self.ttl = ttl
        self._records: OrderedDict[str, TaskRecord] = OrderedDict()

    async def create(self, record: TaskRecord) -> bool:
        """Keep ``record``; False when every kept task is still running."""
        self._expire()
        while len(self._records) >= self.max_tasks:
            oldest = next((r for r in self._records.values() if r.status in TERMINAL), None)
            if oldest is None:
                return False
            del self._records[oldest.id]
        self._records[record.id] = record
        return True

    async def load(self, principal: str, task_id: str) -> TaskRecord | None:
        self._expire()
        record = self._records.get(task_id)
        return record if record is not None and record.principal == principal else None

    async def change(self, principal: str, task_id: str, change: Change) -> TaskRecord | None:
        record = await self.load(principal, task_id)
        if record is not None:
            change(record)  # in place: nothing else runs meanwhile
        return record

    def _expire(self) -> None:
        deadline = time.time() - self.ttl
        for task_id in [
            r.id
            for r in self._records.values()
            if r.finished_at is not None and r.finished_at < deadline
        ]:
            del self._records[task_id]


class SharedRecords:
    """Task records in a store every replica shares, each read-modify-write locked."""

    def __init__(self, memory: MemoryManager, ttl: float) -> None:
        self.memory = memory
        self.ttl = ttl

    async def create(self, record: TaskRecord) -> bool:
        await self._save(record)
        return True

    async def load(self, principal: str, task_id: str) -> TaskRecord | None:
        stored = await self.memory.get(SessionKey("task", task_id, principal))
        if stored is None or not isinstance(stored.meta.get("task"), dict):
            return None
        record = TaskRecord(**stored.meta["task"])
        if record.finished_at is not None and record.finished_at < time.time() - self.ttl:
            return None
        return record

    async def change(self, principal: str, task_id: str, change: Change) -> TaskRecord | None:
        async with entry_lock(self.memory, SessionKey("task", task_id, principal)):
            record = await self.load(principal, task_id)
            if record is not None and change(record):
                await self._save(record)
            return record

    async def _save(self, record: TaskRecord) -> None:
        key = SessionKey("task", record.id, record.principal)
        await self.memory.append(key, (), meta={"task": dataclasses.asdict(record)})


class TaskStore:
    """The tasks: their records (here or shared), and the runs working here."""

    def __init__(
        self,
        max_tasks: int = 1000,
        ttl: float = 3600.0,
        poll_ms: int = 500,
        *,
        memory: MemoryManager | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        runs: DurableRuns | None = None,
    ) -> None:
        self.max_tasks = max_tasks
        self.ttl = ttl
        self.poll_ms = poll_ms
        shared = memory is not None and is_shared(memory)
        self.records: LocalRecords | SharedRecords = (
            SharedRecords(memory, ttl)
            if memory is not None and shared
            else LocalRecords(max_tasks, ttl)
        )
        self.runs = runs
        """Durable runs: each task's run is one (resumed elsewhere when its replica dies),
        and :class:`~agenthost.adapters.mcp.task_runs.TaskRuns` settles it. None: the run
        is a task of this process, leased."""
        self.cancels = CancelChannel.of(memory, NAMESPACE) if memory is not None else None
        self.leases = (
            Leases.of(memory, NAMESPACE, lease_seconds)
            if memory is not None and runs is None
            else None
        )
        self._runners: dict[str, tuple[str, asyncio.Task[None]]] = {}

    @property
    def shared(self) -> bool:
        return isinstance(self.records, SharedRecords)

    async def start(
        self, principal: str, call: Mapping[str, Any], run: Run, *, after: float = 0.0
    ) -> dict[str, Any]:
        """Run ``call`` as a new task: its ``CreateTaskResult``.

        The call's own result instead when the run ends within ``after``
        seconds, or when no task can be kept (the run then goes on in the call).
        """
        if self.runs is not None:
            return await self._start_durable(self.runs, principal, call, run, after)
        work = asyncio.ensure_future(run())
        try:
            if after > 0:
                done, _ = await asyncio.wait({work}, timeout=after)
                if done:
                    return work.result()
            if self.shared and len(self._runners) >= self.max_tasks:
                return await work
            now = _now()
            record = TaskRecord(secrets.token_urlsafe(16), principal, now, now, dict(call))
            if self.leases is not None:
                await self.leases.take(principal, record.id)
            # Durable before it is named (SEP-2663): a tasks/get right after resolves.
            if not await self.records.create(record):
                return await work
        except BaseException:
            work.cancel()
            raise
        self._follow(record, work)
        return {"resultType": "task", **self._envelope(record)}

    async def _start_durable(
        self, runs: DurableRuns, principal: str, call: Mapping[str, Any], run: Run, after: float
    ) -> dict[str, Any]:
        running = sum(1 for id in runs.tasks if id.startswith(RUN_PREFIX))
        if self.shared and running >= self.max_tasks:
            return await run()
        now = _now()
        record = TaskRecord(secrets.token_urlsafe(16), principal, now, now, dict(call))
        # Durable before it is named (SEP-2663): a tasks/get right after resolves.
        if not await self.records.create(record):
            return await run()
        await runs.start(_run_record(record))
        if after > 0:
            with suppress(TimeoutError, AgentError):  # its end; or the task it stays
                async with asyncio.timeout(after):
                    async for _ in runs.follow(run_id(record.id, 0)):
                        pass
            ended = await self.records.load(principal, record.id)
            if ended is not None and ended.status in ("completed", "input_required"):
                assert ended.result is not None
                return ended.result
            if ended is not None and ended.status == "failed" and ended.error is not None:
                raise MCPError(ended.error["code"], ended.error["message"])
        return {"resultType": "task", **self._envelope(record)}

    async def get(self, principal: str, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task, with its result, error or input requests inlined."""
        record = await self.records.load(principal, task_id)
        if record is None:
            raise _unknown(task_id)
        if await self._orphaned(record):
            error = {"code": types.INTERNAL_ERROR, "message": ORPHANED}
            record = await self._settle(principal, task_id, "failed", error=error) or record
        # Not a task's creation: an ordinary ("complete") result, as SEP-2663 marks it.
        detailed = {"resultType": "complete", **self._envelope(record)}
        if record.status == "completed" and record.result is not None:
            detailed["result"] = record.result
        if record.status == "failed" and record.error is not None:
            detailed["error"] = record.error
        if record.status == "input_required":
            detailed["inputRequests"] = {
                k: v for k, v in record.asked.items() if k not in record.answers
            }
        return detailed

    async def cancel(self, principal: str, task_id: str) -> None:
        """``tasks/cancel``: stop a task that is not terminal (here, or on its replica)."""

        was: list[Status] = []

        def cancelled(record: TaskRecord) -> bool:
            if record.status in TERMINAL:
                return False
            was.append(record.status)
            record.touch("cancelled")
            return True

        record = await self.records.change(principal, task_id, cancelled)
        if record is None:
            raise _unknown(task_id)
        if self._stop(principal, task_id):
            return
        if self.runs is not None and was == ["working"]:
            await self.runs.cancel(run_id(task_id, record.round))  # else at its next renewal
        if self.cancels is not None:
            await self.cancels.send(principal, task_id)  # at once, on the replica running it

    async def update(
        self, principal: str, task_id: str, responses: Mapping[str, Any], resume: Resume
    ) -> None:
        """``tasks/update``: take the responses to outstanding input requests; once all
        are in, the run goes on with them. Responses for other keys (or tasks) are ignored;
        a task that is unknown, or another principal's, is refused as ``tasks/get`` does."""
        resumed = False

        def answered(record: TaskRecord) -> bool:
            nonlocal resumed
            if record.status != "input_required":
                return False
            new = {k: v for k, v in responses.items() if k in record.asked}
            new = {k: v for k, v in new.items() if k not in record.answers}
            for key, value in new.items():
                try:
                    _RESPONSE.validate_python(value)
                except ValidationError:
                    raise MCPError(
                        types.INVALID_PARAMS, f"inputResponses.{key} is not a valid response"
                    ) from None
            if not new:
                return False
            record.answers.update(new)
            if record.asked.keys() <= record.answers.keys():
                resumed = True
                record.touch("working")
            else:
                record.updated = _now()
            return True

        record = await self.records.change(principal, task_id, answered)
        if record is None:
            raise _unknown(task_id)
        if not resumed:
            return
        prefix = f"{record.round}."
        call = {
            **record.call,
            "inputResponses": {k.removeprefix(prefix): v for k, v in record.answers.items()},
            "requestState": record.state,
        }
        if self.runs is not None:
            await self.runs.start(_run_record(record, call))
            return
        run = resume(call)
        if run is None:
            error = {"code": types.INVALID_PARAMS, "message": f"Unknown tool: {call.get('name')}"}
            await self._settle(principal, task_id, "failed", error=error)
            return
        if self.leases is not None:
            await self.leases.take(principal, task_id)
        self._follow(record, asyncio.ensure_future(run()))

    async def listen(self) -> None:
        """Stop the runs other replicas were asked to cancel, until cancelled."""
        if self.cancels is None:
            return

        async def stop(principal: str, task_id: str) -> None:
            self._stop(principal, task_id)

        await self.cancels.listen(stop)

    async def close(self) -> None:
        """Cancel the runs working here (shutdown) and wait until they have stopped."""
        runners = list(self._runners.items())
        for task_id, (principal, _) in runners:
            # A runner cancelled before it ran never says so.
            try:
                await self._settle(principal, task_id, "cancelled")
            except Exception:
                logger.exception("MCP task %s could not be recorded cancelled", task_id)
        for _, (_, runner) in runners:
            runner.cancel()
        await asyncio.gather(*(runner for _, (_, runner) in runners), return_exceptions=True)

    async def _orphaned(self, record: TaskRecord) -> bool:
        """Whether ``record`` reads as working but no live replica holds its lease."""
        if record.status != "working" or record.id in self._runners or self.leases is None:
            return False
        return not await self.leases.alive(record.principal, record.id)

    def _stop(self, principal: str, task_id: str) -> bool:
        if self.runs is not None:  # its durable run, when it runs here (its record: checked)
            runs = [
                t for id, t in self.runs.tasks.items() if id.startswith(f"{RUN_PREFIX}{task_id}.")
            ]
            for task in runs:
                task.cancel()
            return bool(runs)
        running = self._runners.get(task_id)
        if running is None or running[0] != principal:
            return False
        running[1].cancel()
        return True

    def _follow(self, record: TaskRecord, work: asyncio.Future[dict[str, Any]]) -> None:
        runner = asyncio.create_task(
            self._run(record.principal, record.id, work), name=f"mcp-task-{record.id}"
        )
        self._runners[record.id] = (record.principal, runner)

    async def _run(self, principal: str, task_id: str, work: asyncio.Future[Any]) -> None:
        try:
            async with self._lease(principal, task_id):
                result = await work
        except asyncio.CancelledError:
            work.cancel()
            await self._settle(principal, task_id, "cancelled")
            raise
        except Exception as exc:
            await self.failed(principal, task_id, exc)
        else:
            await self.finished(principal, task_id, result)
        finally:
            if (running := self._runners.get(task_id)) and running[1] is asyncio.current_task():
                del self._runners[task_id]

    async def finished(self, principal: str, task_id: str, result: dict[str, Any]) -> None:
        """Record the result of the task's run: completed, or waiting for input."""
        if result.get("resultType") == "input_required":
            await self._settle(
                principal,
                task_id,
                "input_required",
                asked=result.get("inputRequests") or {},
                state=result.get("requestState"),
                result=result,  # the call's own answer, had it ended within task_after
            )
        else:
            await self._settle(principal, task_id, "completed", result=result)

    async def cancelled(self, principal: str, task_id: str) -> None:
        """Record the task's run as cancelled (unless the task already ended)."""
        await self._settle(principal, task_id, "cancelled")

    async def failed(self, principal: str, task_id: str, exc: BaseException) -> None:
        """Record the task's run as failed: its protocol error, or an internal one."""
        if isinstance(exc, MCPError):
            error = {"code": exc.error.code, "message": exc.error.message}
        elif isinstance(exc, AgentError):  # the run could not go on (its replica stopped)
            error = {"code": types.INTERNAL_ERROR, "message": str(exc)}
        else:
            logger.error("MCP task %s failed: %s", task_id, exc, exc_info=exc)
            error = {"code": types.INTERNAL_ERROR, "message": f"Internal error: {exc}"}
        await self._settle(principal, task_id, "failed", error=error)

    def _lease(self, principal: str, task_id: str) -> AbstractAsyncContextManager[None]:
        return self.leases.held(principal, task_id) if self.leases is not None else nullcontext()

    async def _settle(
        self,
        principal: str,
        task_id: str,
        status: Status,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        asked: Mapping[str, Any] | None = None,
        state: str | None = None,
    ) -> TaskRecord | None:
        """Record the outcome of the task's run, unless the task already ended."""

        def settled(record: TaskRecord) -> bool:
            if record.status in TERMINAL:
                return False
            record.result, record.error = result, error
            if status == "input_required":
                # Keys never repeat within a task (SEP-2663): each round has its own prefix.
                record.round += 1
                record.asked = {f"{record.round}.{k}": v for k, v in (asked or {}).items()}
                record.answers, record.state = {}, state
            record.touch(status)
            return True

        return await self.records.change(principal, task_id, settled)

    def _envelope(self, record: TaskRecord) -> dict[str, Any]:
        return {
            "taskId": record.id,
            "status": record.status,
            "createdAt": record.created,
            "lastUpdatedAt": record.updated,
            "ttlMs": int(self.ttl * 1000),
            "pollIntervalMs": self.poll_ms,
        }


def run_id(task_id: str, round: int) -> str:
    """The durable run of a task's ``round`` (0: its call; then one per answered round)."""
    return f"{RUN_PREFIX}{task_id}.{round}"


def _run_record(record: TaskRecord, call: Mapping[str, Any] | None = None) -> RunRecord:
    """The durable run of ``record``'s current round: its call (with this round's
    answers), enough to run it again on any replica."""
    call = dict(call if call is not None else record.call)
    request = {"task": record.id, "call": call}
    return RunRecord(
        run_id(record.id, record.round), PROTOCOL, str(call.get("name")), record.principal, request
    )


class TaskParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


class UpdateParams(TaskParams):
    """The params of ``tasks/update``."""

    input_responses: dict[str, Any] = Field(default_factory=dict)


def check_task_request(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """Refuse a ``tasks/*`` request its client may not make.

    Tasks are for clients that declared the extension (else -32021). SEP-2663
    routes ``tasks/*`` by ``Mcp-Name: <taskId>``; one naming another task is
    refused (-32020).
    """
    if not negotiated(ctx):
        raise MCPError(
            MISSING_CAPABILITY,
            f"Declare the {EXTENSION} extension to use tasks",
            {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )
    request = ctx.request
    if not isinstance(request, HTTPConnection):
        return
    header = request.headers.get(MCP_NAME_HEADER)
    if header is not None and decode_header_value(header) != task_id:
        raise MCPError(HEADER_MISMATCH, f"{MCP_NAME_HEADER} header does not match params.taskId")
