"""Agent as a tool (handoff): another hosted agent answers a task for the caller.

The sub-agent gets the task and a read-only copy of the caller's
conversation up to the caller's last complete answer (the tool calls in
progress are not part of it), so concurrent callers never share state. Its
text becomes the tool result; its updates reach the caller's stream wrapped
in :class:`~agents.results.SubAgentUpdate`. A sub-agent that ends waiting
for the client (``ask_user``) cannot be resumed from inside another run: its
question comes back in the tool result, for the caller's model to ask.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

from agenthost.agents.errors import AgentError
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.results import RunFinished, RunResult, RunUpdate, SubAgentUpdate, Usage
from agenthost.agents.tools.client import question_of
from agenthost.agents.tools.functions import Tool

if TYPE_CHECKING:
    from agenthost.agents.agent import Agent

MAX_DEPTH = 5
"""Agents handing off to agents, at most this deep (start-up refuses configured cycles)."""

_depth: ContextVar[int] = ContextVar("handoff_depth", default=0)
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")

Emit = Callable[[RunUpdate], None]


class ReadOnlyHistory:
    """A session that shows a copy of the caller's conversation and stores nothing."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = tuple(messages)

    async def load(self) -> list[Message]:
        return list(self._messages)

    async def append(self, messages: Sequence[Message]) -> None:
        return None


def history_view(conversation: Sequence[Message]) -> list[Message]:
    """The caller's conversation up to its last assistant answer that calls no tool."""
    end = 0
    for index, message in enumerate(conversation):
        if message.role == "assistant" and not message.tool_calls:
            end = index + 1
    return [m for m in conversation[:end] if m.role != "system"]


class AgentTool(Tool):
    """A tool whose work is done by another agent: ``{"task": "..."}`` → its answer."""

    def __init__(self, agent: Agent, *, description: str | None = None) -> None:
        async def delegate(task: str) -> str:
            """The task for the agent, with everything it needs to know."""
            result = await agent.run(task)
            return _tool_text(agent.name, result)

        super().__init__(
            delegate,
            name=_TOOL_NAME.sub("_", agent.name),
            description=description
            or agent.description
            or f"Hand a task to the {agent.name} agent; it answers with text.",
        )
        self.agent = agent

    async def hand_off(
        self, call: ToolCallPart, conversation: Sequence[Message], emit: Emit
    ) -> tuple[ToolResultPart, Usage]:
        """Run the agent for ``call``; ``emit`` gets its updates; a failure is the result."""
        depth = _depth.get()
        if depth >= MAX_DEPTH:
            return self._result(call, f"handoff deeper than {MAX_DEPTH} agents refused", True)
        try:
            task = str(self.parse(call.arguments)["task"])
        except AgentError as exc:
            return self._result(call, str(exc), True)
        token = _depth.set(depth + 1)
        try:
            result = await self._run(task, conversation, emit)
        except AgentError as exc:
            return self._result(call, f"{self.agent.name} failed: {exc}", True)
        finally:
            _depth.reset(token)
        part, _ = self._result(call, _tool_text(self.agent.name, result))
        return part, result.usage

    async def _run(self, task: str, conversation: Sequence[Message], emit: Emit) -> RunResult:
        session = ReadOnlyHistory(history_view(conversation))
        result: RunResult | None = None
        updates = self.agent.run_stream(task, session=session)
        try:
            async for update in updates:
                emit(SubAgentUpdate(self.agent.name, update))
                if isinstance(update, RunFinished):
                    result = update.result
        finally:
            await updates.aclose()
        if result is None:
            raise AgentError(f"agent {self.agent.name!r} ended without a result")
        return result

    def _result(
        self, call: ToolCallPart, content: str, is_error: bool = False
    ) -> tuple[ToolResultPart, Usage]:
        part = ToolResultPart(call_id=call.id, name=call.name, content=content, is_error=is_error)
        return part, Usage()


def _tool_text(name: str, result: RunResult) -> str:
    if not result.pending:
        return result.output
    asks = [
        question_of(c) or f"the client's answer to {c.name}({c.arguments})" for c in result.pending
    ]
    waiting = "; ".join(asks)
    return f"{result.output}\n\n[{name} needs an answer before it can finish: {waiting}]".strip()
