"""Wrap a plain function into an agent.

``f(messages) -> str`` (sync or async) answers at once; an async generator
``f(messages)`` that yields text chunks streams them as they come.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

from agenthost.agents.agent import BaseAgent
from agenthost.agents.messages import Message
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, RunResult, RunUpdate, TextDelta

AgentFunction = Callable[[list[Message]], str | Awaitable[str] | AsyncIterator[str]]


class FunctionAgent(BaseAgent):
    """Answers with what the function returns (or yields) for the conversation so far."""

    def __init__(self, name: str, function: AgentFunction, *, description: str = "") -> None:
        super().__init__(name, description or inspect.getdoc(function) or "")
        self.function = function

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        reply = self.function([*history, *input])
        if isinstance(reply, AsyncIterator):
            chunks: list[str] = []
            try:
                async for chunk in reply:
                    chunks.append(chunk)
                    if stream and chunk:
                        yield TextDelta(chunk)
            finally:
                if isinstance(reply, AsyncGenerator):  # closed now, not by the garbage collector
                    await reply.aclose()
            text = "".join(chunks)
        else:
            text = await reply if inspect.isawaitable(reply) else reply
            if stream and text:
                yield TextDelta(text)
        yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))
