"""Run one step's tool calls concurrently, streaming the updates of agents among them.

Plain tools run through the agent's own tool pipeline (``run_tool``);
:class:`~agents.composition.handoff.AgentTool` calls run their agent, whose
updates are yielded while the calls are still running. Closing the iterator
(a cancelled run) cancels every call still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthost.agents.cancelling import cancel_and_wait
from agenthost.agents.composition.handoff import AgentTool
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.results import RunUpdate, Usage

RunTool = Callable[[ToolCallPart], Awaitable[ToolResultPart]]


@dataclass(slots=True)
class CallsDone:
    """The results of every call, in call order, and what the agents among them used."""

    results: list[ToolResultPart]
    usage: Usage = field(default_factory=Usage)


async def run_calls(
    calls: Sequence[ToolCallPart],
    tools: Mapping[str, object],
    conversation: Sequence[Message],
    run_tool: RunTool,
) -> AsyncIterator[RunUpdate | CallsDone]:
    """Yield nested updates as they come, then one :class:`CallsDone`."""
    updates: asyncio.Queue[RunUpdate] = asyncio.Queue()

    async def run_one(call: ToolCallPart) -> tuple[ToolResultPart, Usage]:
        tool = tools.get(call.name)
        if isinstance(tool, AgentTool):
            return await tool.hand_off(call, conversation, updates.put_nowait)
        return await run_tool(call), Usage()

    everything: asyncio.Future[list[tuple[ToolResultPart, Usage]]] = asyncio.ensure_future(
        asyncio.gather(*(run_one(c) for c in calls))
    )
    next_update: asyncio.Future[RunUpdate] | None = None
    try:
        while not everything.done():
            next_update = asyncio.ensure_future(updates.get())
            waiting: set[asyncio.Future[Any]] = {everything, next_update}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if next_update.done():
                yield next_update.result()
            else:
                next_update.cancel()
        while not updates.empty():
            yield updates.get_nowait()
        outcomes = everything.result()
    finally:
        if next_update is not None:
            next_update.cancel()
        if not everything.done():
            await cancel_and_wait(everything)
    usage = Usage()
    for _, used in outcomes:
        usage += used
    yield CallsDone([result for result, _ in outcomes], usage)
