"""The one pipeline every runtime tool call goes through, in this order:

validate the input → retry wrapper → ``start`` event → cache lookup → run
(with the tool's time-out) → cache write → ``success`` or ``error`` event →
``finish`` event.

Invalid input is not retried: its error (naming each bad field) goes back to
the model, which can try again. A :class:`~agents.errors.FatalToolError` is
not retried either. Every other failure — an exception, a time-out — is
retried as the tool's :class:`~agents.tools.base.ToolOptions` say.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import orjson
from pydantic import BaseModel

from agenthost.agents.errors import FatalToolError, ToolError
from agenthost.agents.tools.base import BaseTool
from agenthost.agents.tools.events import ToolEvent, ToolEventKind, ToolHooks

logger = logging.getLogger("agenthost.agents.tools")


class _Emitter:
    def __init__(self, tool: BaseTool, call_id: str, hooks: Sequence[ToolHooks]) -> None:
        self.tool = tool.name
        self.call_id = call_id
        self.hooks = hooks
        self.started = time.perf_counter()

    async def __call__(
        self,
        kind: ToolEventKind,
        attempt: int,
        arguments: Mapping[str, Any] | None,
        **outcome: Any,
    ) -> None:
        if not self.hooks:
            return
        elapsed = time.perf_counter() - self.started
        event = ToolEvent(kind, self.tool, self.call_id, attempt, arguments, elapsed, **outcome)
        for hook in self.hooks:
            try:
                await hook.on_tool_event(event)
            except ToolError:
                if kind == "start":
                    raise  # a hook refusing the call (e.g. approval)
                logger.exception("tool hook %r failed on %s", hook, kind)
            except Exception:
                logger.exception("tool hook %r failed on %s", hook, kind)


async def run_pipeline(
    tool: BaseTool, arguments: str, *, call_id: str = "", hooks: Sequence[ToolHooks] = ()
) -> str:
    """Run one call of ``tool`` and return its result as text, or raise ToolError."""
    emit = _Emitter(tool, call_id, (*tool.hooks, *hooks))
    try:
        validated = tool.parse(arguments)
    except ToolError as exc:
        await emit("error", 0, None, error=exc)
        await emit("finish", 0, None, error=exc)
        raise
    attempt = 0
    outcome: dict[str, Any] = {}
    try:
        while True:
            attempt += 1
            try:
                await emit("start", attempt, validated)
            except ToolError as refused:
                outcome = {"error": refused}
                raise
            try:
                text, cached = await _attempt(tool, validated)
            except Exception as exc:
                error = _as_tool_error(tool, exc)
                await emit("error", attempt, validated, error=error)
                if isinstance(error, FatalToolError) or attempt > tool.options.retries:
                    outcome = {"error": error}
                    raise error from exc
                await anyio.sleep(tool.options.delay(attempt))
                continue
            outcome = {"result": text, "cached": cached}
            await emit("success", attempt, validated, **outcome)
            return text
    finally:
        # Shielded: the finish event is also sent for a cancelled call.
        with anyio.CancelScope(shield=True):
            await emit("finish", attempt, validated, **outcome)


async def _attempt(tool: BaseTool, arguments: dict[str, Any]) -> tuple[str, bool]:
    cache = tool.cache
    if cache is None:
        return await _invoke(tool, arguments), False
    key = cache.key(tool.name, arguments)
    async with cache.claim(key) as hit:
        if hit is not None:
            return hit, True
        text = await _invoke(tool, arguments)
        cache.put(key, text)
        return text, False


async def _invoke(tool: BaseTool, arguments: dict[str, Any]) -> str:
    timeout = tool.options.timeout
    if timeout is None:
        return to_text(await tool.invoke(arguments))
    text = ""
    with anyio.move_on_after(timeout) as deadline:
        text = to_text(await tool.invoke(arguments))
    if deadline.cancelled_caught:
        raise ToolError(f"{tool.name} timed out after {timeout:g} s")
    return text


def _as_tool_error(tool: BaseTool, exc: Exception) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    return ToolError(f"{tool.name} failed: {exc or type(exc).__name__}")


def to_text(value: Any) -> str:
    """A tool's return value as the text the model reads (JSON unless it is text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return orjson.dumps(value, default=str).decode()
