"""Code agents of ts_sdk_agents.yaml (the TypeScript SDK client tests): one that asks
its user, two whose tools log (a tool that works, one that fails), one that takes a
while, and one whose every run streams from the fake upstream's slow stream."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from agenthost.agents import (
    ASK_USER,
    BaseAgent,
    ChatAgent,
    Message,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    Session,
)
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import Reply, call
from tests.adapters.mcp import logging_agents


def _asks_the_city(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"It is sunny in {last.parts[0].content}."  # type: ignore[union-attr]
    return call("ask_user", '{"question": "Which city?"}')


class Unhurried(BaseAgent):
    """Answers "done at last" after half a second (a task polled while it works)."""

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        await asyncio.sleep(0.5)
        yield RunFinished(RunResult("done at last", [*input, Message.assistant("done at last")]))


class AlwaysStreams(ChatAgent):
    """Streams its model's answer even in an unstreamed run (an MCP task's is one), so
    that the fake upstream's slow stream shows whether a cancel stopped the run."""

    def _session_turn(
        self,
        history: list[Message],
        input: list[Message],
        options: RunOptions,
        *,
        stream: bool,
        session: Session | None,
    ) -> AsyncIterator[RunUpdate]:
        return super()._session_turn(history, input, options, stream=True, session=session)


weather = ChatAgent("weather", FunctionModel(_asks_the_city), tools=(ASK_USER,))
adder = logging_agents.adder()
exploder = logging_agents.exploder()
unhurried = Unhurried("unhurried", "Answers after half a second.")
long_task = AlwaysStreams(
    "long_task",
    OpenAIModel("slow", base_url=os.environ["UPSTREAM_URL"], api_key="upstream", max_retries=0),
    description="Streams the fake upstream's slow answer (200 words, 10 s), even as a task.",
)
