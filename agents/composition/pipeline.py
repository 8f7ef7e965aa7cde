"""``kind: pipeline``: agents in a row, each working on the previous one's answer.

The first step gets the conversation; every later step gets only the
previous step's answer (the last exchange, not the transcript). The last
step's answer is the pipeline's, streamed as it is generated; earlier steps
stream as :class:`~agents.results.SubAgentUpdate`. Usage is summed over the
steps. A step that ends waiting for the client fails the run: a pipeline
cannot resume a step in the middle. Steps are agents hosted next to the
pipeline: their lifespans are the app's, not the pipeline's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Self

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import AgentError, UserError
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
from agenthost.agents.sessions import InMemorySession

if TYPE_CHECKING:
    from agenthost.agents.agent import Agent
    from agenthost.agents.hosting import Hosting


class PipelineAgent(BaseAgent):
    """Runs ``steps`` in order; the last step's answer is the answer."""

    def __init__(self, name: str, steps: Sequence[Agent], *, description: str = "") -> None:
        if not steps:
            raise ValueError("a pipeline needs at least one step")
        super().__init__(name, description)
        self.steps = tuple(steps)

    def _served_copy(self, hosting: Hosting, serve: Callable[[Agent], Agent]) -> Self:
        agent = super()._served_copy(hosting, serve)
        agent.steps = tuple(serve(step) for step in self.steps)
        return agent

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        refuse_client_tools(self.name, "pipeline", options)
        usage = Usage()
        step_input: list[Message] = list(input)
        step_history: list[Message] = list(history)
        result: RunResult | None = None
        for index, step in enumerate(self.steps):
            last = index == len(self.steps) - 1
            updates = step.run_stream(step_input, session=InMemorySession(step_history))
            result = None
            try:
                async for update in updates:
                    if isinstance(update, RunFinished):
                        result = update.result
                    elif last and isinstance(update, TextDelta):
                        yield update
                    elif stream:
                        yield SubAgentUpdate(step.name, update)
            finally:
                await updates.aclose()
            if result is None:
                raise AgentError(f"pipeline {self.name!r}: step {step.name!r} gave no result")
            if result.pending:
                raise AgentError(
                    f"pipeline {self.name!r}: step {step.name!r} asked the client for input; "
                    "a step inside a pipeline cannot wait for the client"
                )
            usage += result.usage
            step_input, step_history = [Message.user(result.output)], []
        assert result is not None
        answer = Message.assistant(result.output)
        yield RunFinished(RunResult(result.output, [*input, answer], usage, result.finish_reason))


def refuse_client_tools(name: str, kind: str, options: RunOptions) -> None:
    """Steps use their own settings; client tools cannot be honoured, so they are refused."""
    if options.tools:
        raise UserError(
            f"agent {name!r} is a {kind}: its steps run with their own tools and cannot "
            "call tools of the client",
            param="tools",
        )
