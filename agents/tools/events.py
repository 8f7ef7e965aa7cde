"""What a tool call reports while it runs, and the one hook interface that watches it.

Every call of a runtime tool goes through the same pipeline and emits, in
order: ``start`` (once per attempt), ``success`` or ``error`` (once per
attempt), and ``finish`` once at the end with the final outcome. Input that
fails validation emits ``error`` then ``finish`` (no attempt was made).

Hooks attach here: structured logging (:class:`LoggingHooks`, on by default
for chat agents) today; metrics and approval later. A hook that raises
:class:`~agents.errors.ToolError` on ``start`` refuses the call; any other
exception raised by a hook is logged and ignored, so a broken observer never
breaks a tool.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agenthost.agents.errors import ToolError

ToolEventKind = Literal["start", "success", "error", "finish"]

logger = logging.getLogger("agenthost.agents.tools")


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One step of one tool call."""

    kind: ToolEventKind
    tool: str
    call_id: str
    attempt: int
    """1 for the first attempt; 0 when validation failed before any attempt."""
    arguments: Mapping[str, Any] | None
    """The validated input (None when it did not validate)."""
    elapsed: float
    """Seconds since the call entered the pipeline."""
    result: str | None = None
    error: ToolError | None = None
    cached: bool = False


class ToolHooks(Protocol):
    """Receives every event of every call of the tools it is attached to."""

    async def on_tool_event(self, event: ToolEvent) -> None: ...


class LoggingHooks:
    """Structured logs of tool calls on the ``agents.tools`` logger.

    ``finish`` is one INFO line per call (outcome, attempts, cache, duration);
    failed attempts are WARNINGs; ``start`` and ``success`` are DEBUG. The
    fields are also set on the log record (``extra``) for JSON formatters.
    Arguments and results are not logged: they may hold personal data.
    """

    async def on_tool_event(self, event: ToolEvent) -> None:
        level = {"error": logging.WARNING, "finish": logging.INFO}.get(event.kind, logging.DEBUG)
        if not logger.isEnabledFor(level):
            return
        outcome = "error" if event.error is not None else "ok"
        fields = {
            "event": f"tool.{event.kind}",
            "tool": event.tool,
            "call_id": event.call_id,
            "attempt": event.attempt,
            "duration_ms": round(event.elapsed * 1000, 1),
            "cached": event.cached,
            "outcome": outcome,
        }
        if event.kind == "error" or (event.kind == "finish" and event.error is not None):
            fields["error"] = str(event.error)
        text = " ".join(f"{key}={value}" for key, value in fields.items())
        logger.log(level, "%s", text, extra={"tool_event": fields})


LOGGING_HOOKS = LoggingHooks()
"""The hooks every chat agent uses unless told otherwise."""
