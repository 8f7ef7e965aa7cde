"""A run's own events as ``notifications/message``: the ``logging`` capability.

What a call reports, at which level: a tool starts (``info``), a tool
fails (``warning``), another agent starts working for the run, a handoff
or a step (``info``, once per agent), the run fails (``error``). Each
message's ``logger`` is ``agenthost.<agent>`` and its ``data`` an object
(``event``, and the tool, agent or error).

Which levels go out:

- handshake era: ``logging/setLevel`` sets the least level for the MCP
  session (``Mcp-Session-Id``; stdio is one session). In stateless mode no
  request knows the previous one: the level is kept for the caller's
  principal (its API key; on this replica, forgotten after the session idle
  timeout), so a client's ``setLevel`` applies to its later calls (without
  API keys every client is one principal: the last level set applies to
  all). Until a level is set it is ``warning``: failures reach every
  client. A request whose
  ``_meta`` names ``io.modelcontextprotocol/logLevel`` gets that level in
  this era too: the one way to choose a level in stateless mode;
- 2026-07-28: the request's ``_meta`` ``io.modelcontextprotocol/logLevel``
  (absent: none), as that era wants; ``logging/setLevel`` does not exist.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, get_args

import mcp_types as types
from cachetools import TTLCache
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import HTTPConnection

from agenthost.adapters.base import principal_of
from agenthost.agents import ANONYMOUS, ToolCallPart, ToolResultPart, kind_of

logger = logging.getLogger("agenthost.mcp")

LEVELS: Final[tuple[types.LoggingLevel, ...]] = get_args(types.LoggingLevel)
"""Least severe first (RFC 5424's order)."""

DEFAULT_LEVEL: Final[types.LoggingLevel] = "warning"
LOG_LEVEL_META_KEY: Final = "io.modelcontextprotocol/logLevel"
STDIO_SESSION: Final = ""


class LogLevels:
    """The level each handshake-era MCP session set, forgotten when the session idles out."""

    def __init__(self, max_sessions: int = 1000, idle_timeout: float = 1800.0) -> None:
        self._levels: TTLCache[str, types.LoggingLevel] = TTLCache(max_sessions, idle_timeout)

    def set(self, ctx: ServerRequestContext[Any, Any], level: types.LoggingLevel) -> None:
        self._levels[_key(ctx)] = level

    def least(self, ctx: ServerRequestContext[Any, Any]) -> types.LoggingLevel | None:
        """The least level this request's messages go out at; None: none go out."""
        meta = (ctx.params or {}).get("_meta")
        named = meta.get(LOG_LEVEL_META_KEY) if isinstance(meta, Mapping) else None
        level = next((known for known in LEVELS if known == named), None)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or level is not None:
            return level  # any era: a request that names its level gets it (stateless too)
        return self._levels.get(_key(ctx), DEFAULT_LEVEL)


def _key(ctx: ServerRequestContext[Any, Any]) -> str:
    """Whose level: the MCP session's, or in stateless mode the principal's."""
    session = session_of(ctx)
    if session is not None:
        return f"session:{session}"
    request = ctx.request
    who = principal_of(request) if isinstance(request, HTTPConnection) else ANONYMOUS
    return f"principal:{who}"


def session_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The MCP session of the request (None: stateless HTTP)."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return STDIO_SESSION
    session: str | None = headers.get("mcp-session-id")
    return session


class RunLog:
    """The messages of one call, sent on its own stream at the levels allowed."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], agent: str, levels: LogLevels) -> None:
        self.ctx = ctx
        self.name = f"agenthost.{agent}"
        least = levels.least(ctx)
        self._least = LEVELS.index(least) if least is not None else len(LEVELS)
        self._workers: set[str] = set()

    def wants(self, level: types.LoggingLevel) -> bool:
        return LEVELS.index(level) >= self._least

    def mute(self) -> RunLog:
        """Send nothing (a task's run, whose request has already been answered)."""
        self._least = len(LEVELS)
        return self

    async def tool_started(self, call: ToolCallPart, by: str | None = None) -> None:
        await self.send("info", {"event": "tool_started", "tool": call.name, "agent": by})

    async def tool_finished(self, result: ToolResultPart, by: str | None = None) -> None:
        if result.is_error:
            event = {"event": "tool_failed", "tool": result.name, "agent": by}
            await self.send("warning", {**event, "error": result.content[:1000]})

    async def worker(self, agent: str) -> None:
        """Another agent works for the run (a handoff, a pipeline or workflow step)."""
        if agent not in self._workers:
            self._workers.add(agent)
            await self.send("info", {"event": "agent_started", "agent": agent})

    async def failed(self, exc: Exception) -> None:
        kind = kind_of(exc).value
        await self.send("error", {"event": "run_failed", "kind": kind, "error": str(exc)[:1000]})

    async def send(self, level: types.LoggingLevel, data: dict[str, Any]) -> None:
        if not self.wants(level):
            return
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=self.name)
        # On this call's own stream (the only one 2026-07-28 allows). Not through
        # send_log_message: the SDK marks it deprecated (SEP-2577) for every era.
        notification = types.LoggingMessageNotification(params=params)
        try:
            await self.ctx.session.send_notification(notification, self.ctx.request_id)
        except Exception:  # a client gone must not fail the run
            logger.debug("a log message could not be sent", exc_info=True)
