"""MCP tasks (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28).

A client that declares the extension (for its session, or in one request's
``_meta`` client capabilities) gets every agent call as a task: ``tools/call``
answers at once with a ``CreateTaskResult`` (``resultType: "task"``) while the
run goes on in the background, so a long run outlives the client's request
timeout. ``tasks/get`` gives the status and, once terminal, the tool result
inlined (``completed``; an agent failure is ``completed`` with an ``isError``
result) or the protocol error (``failed``); ``tasks/cancel`` stops the run
(``cancelled``); ``tasks/update`` refuses (a task never waits for input: a
question the agent asks is its result). SEP-2663 removed ``tasks/list`` and ``tasks/result``: not
served (-32601). Tasks are kept per principal: another key's task is unknown, the
same error as a task that never existed. The table is bounded: past
``max_tasks`` the oldest finished task is dropped, and when every kept task is
still running a new call runs synchronously (no task) rather than unbounded.
A finished task is kept ``ttl`` seconds. Tasks live in this process.

The 2025-11-25 form (``params.task`` on ``tools/call``) is not served: the
SDK shapes every ``tools/call`` result of that era as a ``CallToolResult``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

logger = logging.getLogger("agenthost.mcp")

EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = -32021
"""SEP-2575's Missing Required Client Capability."""
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

Status = Literal["working", "completed", "failed", "cancelled"]
TERMINAL: frozenset[Status] = frozenset({"completed", "failed", "cancelled"})


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


@dataclass(slots=True)
class _Task:
    id: str
    principal: str
    created: str
    updated: str
    status: Status = "working"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    finished_at: float | None = None
    runner: asyncio.Task[None] | None = field(default=None, repr=False)


class TaskStore:
    """The tasks of this process, by id, each visible to its own principal only."""

    def __init__(self, max_tasks: int = 1000, ttl: float = 3600.0, poll_ms: int = 500) -> None:
        self.max_tasks = max_tasks
        self.ttl = ttl
        self.poll_ms = poll_ms
        self._tasks: OrderedDict[str, _Task] = OrderedDict()

    def start(
        self, principal: str, run: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any] | None:
        """Run ``run`` as a new task; its ``CreateTaskResult``, or None when the table is full."""
        if not self._make_room():
            return None
        now = _now()
        task = _Task(secrets.token_urlsafe(16), principal, now, now)
        self._tasks[task.id] = task
        task.runner = asyncio.create_task(self._run(task, run), name=f"mcp-task-{task.id}")
        return {"resultType": "task", **self._envelope(task)}

    def get(self, principal: str, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task, with its result or error inlined once terminal."""
        task = self._find(principal, task_id)
        # Not a task's creation: an ordinary ("complete") result, as SEP-2663 marks it.
        detailed = {"resultType": "complete", **self._envelope(task)}
        if task.status == "completed" and task.result is not None:
            detailed["result"] = task.result
        if task.status == "failed" and task.error is not None:
            detailed["error"] = task.error
        return detailed

    def cancel(self, principal: str, task_id: str) -> None:
        """``tasks/cancel``: stop a working task (a terminal one stays as it is)."""
        task = self._find(principal, task_id)
        if task.status not in TERMINAL:
            self._finish(task, "cancelled")
            if task.runner is not None:
                task.runner.cancel()

    async def close(self) -> None:
        """Cancel the running tasks (shutdown) and wait until they have stopped."""
        running = [t for t in self._tasks.values() if t.status not in TERMINAL]
        runners = [t.runner for t in running if t.runner is not None]
        for task in running:
            self._finish(task, "cancelled")  # a runner cancelled before it ran never says so
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)

    def _find(self, principal: str, task_id: str) -> _Task:
        self._expire()
        task = self._tasks.get(task_id)
        if task is None or task.principal != principal:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task: {task_id}", {"taskId": task_id})
        return task

    async def _run(self, task: _Task, run: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            result = await run()
        except asyncio.CancelledError:
            self._finish(task, "cancelled")
            raise
        except MCPError as exc:
            task.error = {"code": exc.error.code, "message": exc.error.message}
            self._finish(task, "failed")
        except Exception as exc:
            logger.exception("MCP task %s failed", task.id)
            task.error = {"code": types.INTERNAL_ERROR, "message": f"Internal error: {exc}"}
            self._finish(task, "failed")
        else:
            task.result = result
            self._finish(task, "completed")

    def _finish(self, task: _Task, status: Status) -> None:
        if task.status in TERMINAL:
            return
        task.status = status
        task.updated = _now()
        task.finished_at = time.monotonic()

    def _envelope(self, task: _Task) -> dict[str, Any]:
        return {
            "taskId": task.id,
            "status": task.status,
            "createdAt": task.created,
            "lastUpdatedAt": task.updated,
            "ttlMs": int(self.ttl * 1000),
            "pollIntervalMs": self.poll_ms,
        }

    def _expire(self) -> None:
        deadline = time.monotonic() - self.ttl
        for task_id in [
            t.id
            for t in self._tasks.values()
            if t.finished_at is not None and t.finished_at < deadline
        ]:
            del self._tasks[task_id]

    def _make_room(self) -> bool:
        self._expire()
        while len(self._tasks) >= self.max_tasks:
            oldest = next((t for t in self._tasks.values() if t.status in TERMINAL), None)
            if oldest is None:
                return False
            del self._tasks[oldest.id]
        return True


class TaskParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


def serve_tasks(server: Server[Any], store: TaskStore, caller: Callable[[Any], str]) -> None:
    """Add the ``tasks/*`` methods to ``server`` and advertise the extension."""

    def gate(ctx: ServerRequestContext[Any, Any]) -> str:
        if not negotiated(ctx):
            raise MCPError(
                MISSING_CAPABILITY,
                f"Declare the {EXTENSION} extension to use tasks",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        return caller(ctx)

    async def get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        return store.get(gate(ctx), params.task_id)

    async def cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        store.cancel(gate(ctx), params.task_id)
        return {"resultType": "complete"}

    async def update(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        # An agent's task never waits for input (a question is its result).
        task = store.get(gate(ctx), params.task_id)
        raise MCPError(
            types.INVALID_PARAMS,
            f"Task {params.task_id} is {task['status']}, not waiting for input",
        )

    server.add_request_handler("tasks/get", TaskParams, get)
    server.add_request_handler("tasks/update", TaskParams, update)
    server.add_request_handler("tasks/cancel", TaskParams, cancel)
    server.extensions[EXTENSION] = {}
