"""Pipelines: each step on the previous step's answer; the last one streams the answer."""

import pytest

from agenthost.agents import (
    ASK_USER,
    AgentError,
    ChatAgent,
    InMemorySession,
    RunFinished,
    SubAgentUpdate,
    TextDelta,
)
from agenthost.agents.composition import PipelineAgent
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import call
from tests.blocking import Blocker

pytestmark = pytest.mark.anyio


def recording(name: str, seen: dict[str, list[str]], prefix: str) -> ChatAgent:
    def reply(request: ModelRequest) -> str:
        seen[name] = [m.text for m in request.messages]
        return f"{prefix}({request.messages[-1].text})"

    return ChatAgent(name, FunctionModel(reply))


async def test_each_step_gets_only_the_previous_answer() -> None:
    seen: dict[str, list[str]] = {}
    pipeline = PipelineAgent(
        "pipe",
        [recording("draft", seen, "draft"), recording("polish", seen, "polish")],
    )
    session = InMemorySession()
    await pipeline.run("first", session=session)
    updates = [u async for u in pipeline.run_stream("topic", session=session)]
    assert seen["draft"] == ["first", "polish(draft(first))", "topic"]  # the conversation
    assert seen["polish"] == ["draft(topic)"]  # the last exchange only
    answer = "".join(u.text for u in updates if isinstance(u, TextDelta))
    assert answer == "polish(draft(topic))"
    nested = [u for u in updates if isinstance(u, SubAgentUpdate)]
    assert nested and {u.agent for u in nested} == {"draft"}
    result = updates[-1]
    assert isinstance(result, RunFinished)
    assert result.result.usage.requests == 2  # summed over the steps
    assert [m.text for m in session.messages[-2:]] == ["topic", "polish(draft(topic))"]


async def test_a_step_that_waits_for_the_client_fails_the_run() -> None:
    asker = ChatAgent("asker", ScriptedModel([call("ask_user", "{}")]), tools=(ASK_USER,))
    pipeline = PipelineAgent("pipe", [asker, ChatAgent("next", ScriptedModel(["x"]))])
    with pytest.raises(AgentError, match="step 'asker' asked the client for input"):
        await pipeline.run("go")


async def test_cancelling_the_pipeline_cancels_the_running_step() -> None:
    blocker = Blocker()
    pipeline = PipelineAgent("pipe", [ChatAgent("slow", FunctionModel(blocker.block))])
    await blocker.cancel_once_started(pipeline.run, "go")
