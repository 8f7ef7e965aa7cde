"""Client connections to external MCP servers, shared by every agent that uses them.

Each :class:`MCPConnection` is owned by one supervisor task, started in the
app's lifespan: it opens the session (stdio subprocess or streamable HTTP),
lists the tools, and keeps the session until it is lost or the app stops.
Opening and closing happen in that one task, as the SDK's task groups
require; calls come from any task.

A server that cannot be reached at start-up stops start-up, unless it is
optional: then it is *down* (its tools are absent, ``/readyz`` says so) and
is retried in the background. A server that dies later fails the calls in
flight with a tool error; the next call reconnects.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.abc

from agenthost.agents.errors import AgentError, ToolError
from agenthost.agents.observe import outgoing

try:
    import httpx2
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, CallToolResult, Tool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "tools from MCP servers need the tools-mcp extra: pip install 'agenthost[tools-mcp]'"
    ) from exc

logger = logging.getLogger("agenthost.agents.tools.mcp")

_CLOSE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class StdioServer:
    """An MCP server started as a subprocess, spoken to over its stdin/stdout."""

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def describe(self) -> str:
        # Not the arguments: they may hold secrets read from the environment.
        return f"command {self.command}"


@dataclass(frozen=True, slots=True)
class HTTPServer:
    """An MCP server at a streamable-HTTP URL."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        # Without credentials or a query, which may hold secrets.
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class MCPServerError(AgentError):
    """A required MCP server cannot be reached at start-up (or is misconfigured)."""


class MCPConnection:
    """One MCP server: its session, its tools, its state (``up``, ``down``, ``starting``)."""

    def __init__(
        self,
        name: str,
        server: StdioServer | HTTPServer,
        *,
        optional: bool = False,
        connect_timeout: float = 30.0,
        retry_interval: float = 30.0,
    ) -> None:
        self.name = name
        self.server = server
        self.optional = optional
        self.connect_timeout = connect_timeout
        self.retry_interval = retry_interval
        self.state = "starting"
        self.error: str | None = None
        self.listed: dict[str, Tool] = {}
        """The server's tools, by name, as last listed."""
        self.required: set[str] = set()
        """Tool names agents asked for by name: missing ones stop start-up."""
        self._client: Client | None = None
        self._lost = anyio.Event()
        self._wanted = anyio.Event()
        self._changed = anyio.Event()
        self._stopping = False
        self._http_status: int | None = None

    @property
    def health(self) -> str:
        return self.state if self.error is None else f"{self.state}: {self.error}"

    async def start(self, tasks: anyio.abc.TaskGroup) -> None:
        """Start the supervisor in ``tasks``; returns once connected (or down, if optional)."""
        self._stopping = False
        self.state, self.error = "starting", None
        await tasks.start(self._supervise)

    def stop(self) -> None:
        """Ask the supervisor to close the session and end."""
        self._stopping = True
        self._lost.set()
        self._wanted.set()

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool; a lost session becomes a ToolError and is reopened by the next call."""
        client = await self._ready_client()
        try:
            # The trace goes along in the request's _meta (traceparent), when traced.
            meta: Any = outgoing() or None
            return await client.call_tool(tool, arguments, meta=meta)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lose(client, exc.message)
                raise ToolError(
                    f"MCP server {self.name!r} closed the connection; "
                    "it is reopened on the next call"
                ) from exc
            raise ToolError(f"MCP server {self.name!r}: {exc.message}") from exc
        except (
            OSError,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            httpx2.HTTPError,
        ) as exc:
            self._lose(client, str(exc) or type(exc).__name__)
            raise ToolError(
                f"MCP server {self.name!r} is unreachable ({exc or type(exc).__name__}); "
                "it is reconnected on the next call"
            ) from exc

    async def _ready_client(self) -> Client:
        if self._client is None:
            changed = self._changed
            self._wanted.set()
            with anyio.move_on_after(self.connect_timeout):
                await changed.wait()
        if self._client is None:
            raise ToolError(f"MCP server {self.name!r} is down: {self.error or 'not connected'}")
        return self._client

    def _lose(self, client: Client, reason: str) -> None:
        # Only the session this call used: another call may have reconnected since.
        if self._client is client:
            logger.warning("MCP server %r lost: %s", self.name, reason)
            self.state, self.error = "down", reason
            self._client = None
            self._lost.set()

    def _set(self, state: str, error: str | None) -> None:
        self.state, self.error = state, error
        self._changed.set()
        self._changed = anyio.Event()

    async def _supervise(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        started = False
        while not self._stopping:
            self._wanted, self._lost = anyio.Event(), anyio.Event()
            self._http_status = None
            opened = False

            def up() -> None:
                nonlocal started, opened
                opened = True
                if not started:
                    started = True
                    task_status.started()

            try:
                await self._session(up)
            except Exception as exc:
                cause = _innermost(exc)
                reason = _describe(cause)
                if self._http_status is not None:
                    # The SDK's message drops the status; a 401 or 403 says "check the headers".
                    reason = f"{reason} (HTTP {self._http_status})"
                self._client = None
                if opened:  # it failed while closing a lost session: nothing to report
                    logger.debug("MCP server %r closed with an error: %s", self.name, reason)
                else:
                    self._set("down", reason)
                if not started:
                    if not self.optional or isinstance(cause, MCPServerError):
                        raise MCPServerError(
                            f"MCP server {self.name!r} ({self.server.describe()}): {reason}"
                        ) from exc
                    logger.warning("optional MCP server %r is down: %s", self.name, reason)
                    started = True
                    task_status.started()
            if self._stopping:
                return
            # Reconnect when a call asks for it; a server that is down is retried
            # in the background too, so an optional one comes back on its own.
            with anyio.move_on_after(self.retry_interval):
                await self._wanted.wait()

    async def _session(self, up: Callable[[], None]) -> None:
        """Open the session, hold it until it is lost or stopped, close it."""
        # One scope around the whole session (the SDK's task groups must nest
        # in it); its deadline bounds the connection and is lifted once up.
        with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as opening:
            async with self._open() as client:
                opening.deadline = math.inf
                self._client = client
                self._set("up", None)
                up()
                await self._lost.wait()
                self._client = None
        if opening.cancelled_caught:
            raise TimeoutError

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(self._transport(stack), cache=None))
            listed = await _list_tools(client)
            missing = sorted(self.required - set(listed))
            if missing:
                raise MCPServerError(
                    f"no tool {missing[0]!r} on this server; it has: {', '.join(sorted(listed))}"
                )
            self.listed = listed
            logger.info("MCP server %r up with %d tools", self.name, len(listed))
            yield client

    def _transport(self, stack: AsyncExitStack) -> Any:
        server = self.server
        if isinstance(server, StdioServer):
            return StdioServerParameters(
                command=server.command, args=list(server.args), env=dict(server.env), cwd=server.cwd
            )

        async def note_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_status = response.status_code

        http = httpx2.AsyncClient(
            headers=dict(server.headers),
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"response": [note_status]},
        )
        stack.push_async_callback(http.aclose)
        return streamable_http_client(server.url, http_client=http)


async def _list_tools(client: Client) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update((tool.name, tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _innermost(exc: BaseException) -> BaseException:
    """The error itself, out of the exception groups the SDK's task groups wrap it in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return str(exc) or type(exc).__name__


class MCPServers:
    """Every configured MCP server: opened concurrently, closed together."""

    name = "mcp_servers"

    def __init__(self, connections: Sequence[MCPConnection] = ()) -> None:
        self.connections = {c.name: c for c in connections}

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        failures: list[MCPServerError] = []

        async def start(connection: MCPConnection) -> None:
            try:
                await connection.start(tasks)
            except MCPServerError as exc:
                failures.append(exc)

        failed_inside: Exception | None = None
        async with anyio.create_task_group() as tasks:
            async with anyio.create_task_group() as opening:
                for connection in self.connections.values():
                    opening.start_soon(start, connection)
            try:
                if not failures:
                    yield
            except Exception as exc:
                # Raised again below, so that the app's error is not wrapped
                # in this task group's exception group.
                failed_inside = exc
            finally:
                for connection in self.connections.values():
                    connection.stop()
                # Sessions close in their own tasks; don't wait forever for a stuck one.
                tasks.cancel_scope.deadline = anyio.current_time() + _CLOSE_TIMEOUT
        if failed_inside is not None:
            raise failed_inside
        if failures:
            raise MCPServerError("; ".join(str(f) for f in failures))

    def health(self) -> dict[str, str]:
        """Server name → ``up``, or ``down: <why>`` (``starting`` before start-up ends)."""
        return {name: c.health for name, c in self.connections.items()}
