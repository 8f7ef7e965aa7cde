"""A task's run as a durable run: it outlives its replica (issue 33).

Each round of a task (its ``tools/call``, then each ``tasks/update`` that
answered every question) is one durable run
(:mod:`agenthost.adapters.durable`): its record holds the tool call (the
agent, its arguments with their ``session_id``, this round's answers), the
caller and the task id; its log, every update of the agent's run. When the
replica running it dies, another one claims it once its lease expires and
goes on from the last finished step (a recorded tool result is never made
again). Whichever replica ends the run writes the task's outcome into the
task records (:meth:`TaskRuns.settled`), so ``tasks/get`` on any replica
sees it with the whole answer.

A task's client never sees a run's partial output: a task sends no progress
or log notifications (its request was answered with the task), so the text
a dead replica had streamed of its unfinished step is discarded without
trace; the task reads ``working`` through the takeover.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.durable import RunRecord
from agenthost.adapters.mcp import asking, convert
from agenthost.adapters.mcp.calls import Conversation, Opening, Result, answer_parts
from agenthost.adapters.mcp.errors import error_result
from agenthost.adapters.mcp.inputs import ToolInput
from agenthost.adapters.mcp.sampling import answers_of_state
from agenthost.adapters.mcp.tasks import TaskStore
from agenthost.agents import (
    AgentError,
    Message,
    RunCancelled,
    RunFinished,
    RunIncomplete,
    RunResult,
    RunUpdate,
    ToolCallPart,
    to_messages,
)
from agenthost.agents.errors import RunInterrupted

ANSWERED = "agenthost.mcp.result"
"""A run's result metadata: the tool result already made (a run that ended waiting)."""
SESSION = "agenthost.mcp.session_id"
"""A run's result metadata: the session id its answer names."""

DECLARED = ("elicitation", "roots", "sampling")
"""The client capabilities a task's run may need (recorded with its call)."""


def declared_needs(declares: Mapping[str, bool]) -> list[str]:
    """What a task's call records of its client: the capabilities it declared."""
    return [need for need in DECLARED if declares.get(need)]


class TaskRuns:
    """How the durable runs run a task's round (a
    :class:`~agenthost.adapters.durable.RunKind`), on any replica."""

    def __init__(
        self, context: AdapterContext, inputs: Mapping[str, ToolInput], tasks: TaskStore
    ) -> None:
        self.context = context
        self.inputs = inputs
        self.tasks = tasks

    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        return self._updates(record, done)

    async def _updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        call = record.request["call"]
        agent = self.context.find_agent(record.principal, record.agent)
        if agent is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {record.agent}")
        params = types.CallToolRequestParams.model_validate(call)
        arguments = (self.inputs.get(agent.name) or ToolInput()).parse(params.arguments)
        conversation = Conversation(agent.name, self.context.memory, record.principal, params)
        sampled = answers_of_state(params) is not None
        state = None if sampled else params.request_state
        asked = asking.session_of_state(state) if state else None
        session_id = arguments.session_id or (asked[0] if asked else None)
        opened = await conversation.open(arguments.input, session_id, asked)
        if not isinstance(opened, Opening):
            yield RunFinished(_answered(opened, session_id))
            return
        # The steps a replica that died finished come after the call's own input.
        input: list[Message] = [*to_messages(opened.input), *done]
        declared = set(call.get("declared") or ())
        while True:
            run = agent.run_stream(input, session=opened.session)
            result: RunResult | None = None
            try:
                async for update in run:
                    if isinstance(update, RunFinished):
                        result = update.result
                        break
                    yield update
            finally:
                await run.aclose()
            if result is None:
                raise RunIncomplete(f"agent {agent.name!r} ended without a result")
            if not result.pending:
                result.metadata = {**result.metadata, SESSION: opened.session_id}
                yield RunFinished(result)
                return
            way = _way(result.pending, declared)
            if way is None and (refused := asking.refusals(result.pending)):
                input = [refused]  # roots or a model answer this client cannot give
                continue
            waiting = await conversation.waiting(opened, result.pending, way)
            yield RunFinished(_answered(waiting, opened.session_id, result))
            return

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        principal, task_id = record.principal, record.request["task"]
        if result is not None:
            answered = result.metadata.get(ANSWERED)
            if not isinstance(answered, dict):
                session_id = result.metadata.get(SESSION)
                made = convert.to_result(result.output, session_id, answer_parts(result))
                answered = _dumped(made)
            await self.tasks.finished(principal, task_id, answered)
        elif isinstance(error, RunCancelled):
            await self.tasks.cancelled(principal, task_id)
        elif isinstance(error, AgentError) and not isinstance(error, RunInterrupted):
            # An agent's failure is the tool's isError result, as in a call.
            await self.tasks.finished(principal, task_id, _dumped(error_result(error)))
        else:
            assert error is not None
            await self.tasks.failed(principal, task_id, error)


def _way(pending: list[ToolCallPart], declared: set[str]) -> asking.Way | None:
    """How a task's client is asked (it is of the 2026-07-28 era: by input requests)."""
    needs = [asking.NEEDS.get(call.name) for call in pending]
    if any(need is None or need not in declared for need in needs):
        return None
    return "input_required"


def _answered(answer: Result, session_id: str | None, result: RunResult | None = None) -> RunResult:
    ran = result or RunResult("", [])
    ran.metadata = {**ran.metadata, ANSWERED: _dumped(answer), SESSION: session_id}
    return ran


def _dumped(result: Result) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)
