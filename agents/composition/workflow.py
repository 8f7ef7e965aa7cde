"""``kind: workflow``: an explicit state machine over a pydantic state defined in code.

Steps are Python functions or agents, in declaration order. A function step
gets a deep copy of the state, changes it and returns where to go: a step's
name, or :data:`NEXT` (also ``None``), :data:`SELF`, :data:`PREV`,
:data:`START` or :data:`END`. An agent step reads its task from a state
field (or the run's input), writes its answer to another and goes on to
``next``. After every step the state is validated again (a step that breaks
the schema fails the run, naming the field) and a snapshot is kept; the
snapshots come back in the result's ``metadata["workflow"]``. The run's
input text starts the state (``input_field``); ``output_field`` at
:data:`END` is the answer. ``max_steps`` stops loops.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self

import anyio.to_thread
import orjson
from pydantic import BaseModel, ValidationError

from agenthost.agents.agent import BaseAgent
from agenthost.agents.composition.pipeline import refuse_client_tools
from agenthost.agents.errors import AgentError, MaxStepsExceeded
from agenthost.agents.messages import Message
from agenthost.agents.options import RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    SubAgentUpdate,
    TextDelta,
    Usage,
)

if TYPE_CHECKING:
    from agenthost.agents.agent import Agent
    from agenthost.agents.hosting import Hosting

NEXT, SELF, PREV, START, END = "NEXT", "SELF", "PREV", "START", "END"
TARGETS = (NEXT, SELF, PREV, START, END)
DEFAULT_MAX_STEPS = 50

StepFunction = Callable[[Any], str | Awaitable[str | None] | None]


@dataclass(frozen=True, slots=True)
class FunctionStep:
    """A Python step: ``function(state) -> next`` (sync or async), on its own state copy."""

    name: str
    function: StepFunction


@dataclass(frozen=True, slots=True)
class AgentStep:
    """An agent step: its task is ``state.<input>`` (or the run's input), its answer ``output``."""

    name: str
    agent: Agent
    output: str
    input: str | None = None
    next: str = NEXT


WorkflowStep = FunctionStep | AgentStep


class WorkflowAgent(BaseAgent):
    """Runs its steps as a state machine; see the module documentation."""

    def __init__(
        self,
        name: str,
        state: type[BaseModel],
        steps: Sequence[WorkflowStep],
        *,
        input_field: str = "input",
        output_field: str = "output",
        max_steps: int = DEFAULT_MAX_STEPS,
        description: str = "",
    ) -> None:
        super().__init__(name, description)
        self.state = state
        self.steps = tuple(steps)
        self.input_field = input_field
        self.output_field = output_field
        self.max_steps = max_steps
        self._index = {step.name: i for i, step in enumerate(self.steps)}
        _check(self)

    def _served_copy(self, hosting: Hosting, serve: Callable[[Agent], Agent]) -> Self:
        agent = super()._served_copy(hosting, serve)
        agent.steps = tuple(
            replace(step, agent=serve(step.agent)) if isinstance(step, AgentStep) else step
            for step in self.steps
        )
        return agent

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        refuse_client_tools(self.name, "workflow", options)
        text = input[-1].text if input else ""
        state = self.state.model_validate({self.input_field: text})
        snapshots: list[dict[str, Any]] = []
        usage = Usage()
        index: int | None = 0
        while index is not None:
            if len(snapshots) >= self.max_steps:
                raise MaxStepsExceeded(
                    f"workflow {self.name!r} did not reach END within {self.max_steps} steps "
                    f"(last: {', '.join(s['step'] for s in snapshots[-3:])})"
                )
            step = self.steps[index]
            working = state.model_copy(deep=True)
            if isinstance(step, AgentStep):
                target: str | None = step.next
                finished: list[RunResult] = []
                async for update in self._agent_step(step, working, text, finished):
                    if stream:
                        yield update
                usage += finished[0].usage
            else:
                target = await self._function_step(step, working)
            state = self._validated(step, working)
            snapshots.append({"step": step.name, "state": state.model_dump(mode="json")})
            index = self._resolve(step, index, target)
        answer = _text(getattr(state, self.output_field))
        if stream and answer:
            yield TextDelta(answer)
        metadata = {"workflow": {"steps": snapshots, "state": state.model_dump(mode="json")}}
        new = [*input, Message.assistant(answer)]
        yield RunFinished(RunResult(answer, new, usage, metadata=metadata))

    async def _agent_step(
        self, step: AgentStep, state: BaseModel, text: str, finished: list[RunResult]
    ) -> AsyncIterator[RunUpdate]:
        """Run the step's agent (its updates nested), its answer into the state."""
        task = _text(getattr(state, step.input)) if step.input else text
        result: RunResult | None = None
        updates = step.agent.run_stream(task)
        try:
            async for update in updates:
                if isinstance(update, RunFinished):
                    result = update.result
                yield SubAgentUpdate(step.name, update)
        finally:
            await updates.aclose()
        if result is None or result.pending:
            raise AgentError(
                f"workflow {self.name!r}: step {step.name!r} ended without an answer "
                "(a step cannot wait for the client)"
            )
        setattr(state, step.output, result.output)
        finished.append(result)

    async def _function_step(self, step: FunctionStep, state: BaseModel) -> str | None:
        try:
            if inspect.iscoroutinefunction(step.function):
                outcome = await step.function(state)
            else:
                outcome = await anyio.to_thread.run_sync(step.function, state)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"workflow {self.name!r}: step {step.name!r} failed: {exc}") from exc
        if outcome is not None and not isinstance(outcome, str):
            raise AgentError(
                f"workflow {self.name!r}: step {step.name!r} returned {outcome!r}; "
                f"return a step name or one of {', '.join(TARGETS)}"
            )
        return outcome

    def _validated(self, step: WorkflowStep, state: BaseModel) -> BaseModel:
        try:
            # Dumped first: assignments are not validated, and nested models would not be.
            return self.state.model_validate(state.model_dump(warnings=False))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise AgentError(
                f"workflow {self.name!r}: step {step.name!r} left the state invalid: {problems}"
            ) from None

    def _resolve(self, step: WorkflowStep, index: int, target: str | None) -> int | None:
        moves = {NEXT: index + 1, SELF: index, PREV: index - 1, START: 0}
        if target is None:
            target = NEXT
        if target == END:
            return None
        if target in moves:
            destination = moves[target]
            if destination < 0:
                raise AgentError(f"workflow {self.name!r}: step {step.name!r} has no PREV")
            return destination if destination < len(self.steps) else None
        if target not in self._index:
            raise AgentError(
                f"workflow {self.name!r}: step {step.name!r} went to unknown step {target!r}; "
                f"steps: {', '.join(self._index)}"
            )
        return self._index[target]


def _check(workflow: WorkflowAgent) -> None:
    """Start-up checks: the mistakes a config can make, refused before the first run."""
    if not workflow.steps:
        raise ValueError("a workflow needs at least one step")
    fields = workflow.state.model_fields
    names = [step.name for step in workflow.steps]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate step names: {', '.join(duplicates)}")
    if reserved := [n for n in names if n in TARGETS]:
        raise ValueError(f"step names {', '.join(reserved)} are reserved")
    wanted = {workflow.input_field, workflow.output_field}
    for step in workflow.steps:
        if isinstance(step, AgentStep):
            wanted |= {step.output, *([step.input] if step.input else [])}
            if step.next not in TARGETS and step.next not in names:
                raise ValueError(f"step {step.name!r}: next: unknown step {step.next!r}")
    if missing := sorted(wanted - set(fields)):
        state = workflow.state.__name__
        raise ValueError(f"state {state} has no field {', '.join(missing)}")
    required = [n for n, f in fields.items() if f.is_required() and n != workflow.input_field]
    if required:
        raise ValueError(
            f"state {workflow.state.__name__}: fields other than {workflow.input_field!r} need "
            f"defaults (the state starts from the input alone): {', '.join(required)}"
        )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return orjson.dumps(value, default=str).decode()
