"""Agents built under a host's Hosting: bounded and watched from the start, never patched.

An agent built elsewhere is served as a copy (``served``); the object given is
left as it was, and the agents it composes are served too, one copy each.
"""

from __future__ import annotations

from typing import Any

import pytest

from agenthost.agents import ChatAgent, RunResult, tool
from agenthost.agents.agent import serving
from agenthost.agents.composition import AgentTool, PipelineAgent
from agenthost.agents.errors import RunLimitExceeded
from agenthost.agents.hosting import UNHOSTED, Hosting
from agenthost.agents.limits import LiveRuns, RunLimits
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import LOGGING_HOOKS, ToolEvent

pytestmark = pytest.mark.anyio


class Watcher:
    """An AgentObserver that writes down what it sees, by agent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def run_started(self, agent: str, conversation: str | None = None) -> _Probe:
        self.seen.append(("run", agent))
        return _Probe()

    def tool_hooks(self, agent: str) -> tuple[_Hook]:
        return (_Hook(self, agent),)

    def upstream_observer(self, agent: str) -> _Upstream:
        return _Upstream(self, agent)


class _Probe:
    def first_text(self) -> None:
        pass

    def finished(self, result: RunResult | None, error: BaseException | None) -> None:
        pass


class _Hook:
    def __init__(self, watcher: Watcher, agent: str) -> None:
        self.watcher, self.agent = watcher, agent

    async def on_tool_event(self, event: ToolEvent) -> None:
        if event.kind == "finish":
            self.watcher.seen.append(("tool", f"{self.agent}:{event.tool}"))


class _Upstream:
    def __init__(self, watcher: Watcher, agent: str) -> None:
        self.watcher, self.agent = watcher, agent

    def upstream_request(self, outcome: str) -> None:
        self.watcher.seen.append(("upstream", self.agent))

    def model_call(self, model: str, params: dict[str, Any]) -> None:
        return None


@tool
def double(n: int) -> int:
    """Twice ``n``."""
    return 2 * n


async def test_an_agent_built_under_a_hosting_is_watched_and_bounded() -> None:
    watcher = Watcher()
    hosting = Hosting(RunLimits(max_output_chars=20), LiveRuns(), watcher)
    model = ScriptedModel([call("double", '{"n": 2}'), "four"])
    agent = ChatAgent("a", model, tools=(double,), hosting=hosting)
    assert agent.hosting is hosting and agent.tool_hooks[0] is LOGGING_HOOKS
    assert (await agent.run("2 doubled?")).output == "four"
    assert watcher.seen == [("run", "a"), ("tool", "a:double")]
    # Each model request carries the agent's upstream observer to the model.
    assert all(isinstance(r.observer, _Upstream) for r in model.requests)
    assert {r.observer.agent for r in model.requests} == {"a"}  # type: ignore[union-attr]
    # The host's default limits bound it; its own win.
    with pytest.raises(RunLimitExceeded):
        await ChatAgent("b", EchoModel(), hosting=hosting).run("word " * 10)
    own = RunLimits(max_output_chars=100)
    echoed = await ChatAgent("b", EchoModel(), limits=own, hosting=hosting).run("word " * 10)
    assert echoed.output.startswith("word")


async def test_serving_makes_a_copy_and_leaves_the_agent_given_as_it_was() -> None:
    watcher = Watcher()
    hosting = Hosting(observer=watcher)
    given = ChatAgent("a", EchoModel(), tools=(double,))
    served = given.served(hosting)
    assert served is not given and served.model is given.model
    assert given.hosting is UNHOSTED and given.tool_hooks == (LOGGING_HOOKS,)
    assert given.upstream is None
    await given.run("hi")
    assert watcher.seen == []
    await served.run("hi")
    assert watcher.seen == [("run", "a")]
    # Serving again starts from the agent's own hooks, not from the copy's.
    assert len(served.served(Hosting(observer=Watcher())).tool_hooks) == 2


async def test_what_a_served_agent_composes_is_served_once_each() -> None:
    watcher = Watcher()
    hosting = Hosting(observer=watcher)
    helper = ChatAgent("helper", EchoModel())
    boss = ChatAgent(
        "boss",
        ScriptedModel([call("helper", '{"task": "say hi"}'), "done"]),
        tools=(AgentTool(helper),),
    )
    pipeline = PipelineAgent("p", [helper, boss])
    serve = serving(hosting)
    served = {a.name: serve(a) for a in (pipeline, boss, helper)}
    assert isinstance(served["p"], PipelineAgent) and isinstance(served["boss"], ChatAgent)
    assert served["p"].steps == (served["helper"], served["boss"])
    (handoff,) = served["boss"].options.tools or ()
    assert isinstance(handoff, AgentTool) and handoff.agent is served["helper"]
    assert handoff.description == AgentTool(helper).description
    # The objects given still point at each other, unserved.
    assert pipeline.steps == (helper, boss) and boss.options.tools[0].agent is helper  # type: ignore[index, union-attr]
    # An agent already built under the hosting is served as it is.
    built = ChatAgent("built", EchoModel(), hosting=hosting)
    assert serve(built) is built
    await served["boss"].run("go")
    # The handoff's run is watched as the helper's (a handoff is no tool call to hook).
    assert watcher.seen == [("run", "boss"), ("run", "helper")]


async def test_a_summary_request_is_watched_as_the_agents() -> None:
    from agenthost.agents import InMemorySession, Message
    from agenthost.agents.history import Summarize

    watcher = Watcher()
    summariser = ScriptedModel(["they talked"])
    memory = Summarize(90, threshold=1, keep_last=2, model=summariser)
    agent = ChatAgent("a", EchoModel(), memory=memory, hosting=Hosting(observer=watcher))
    turns = [
        (Message.user(f"question {i} " * 5), Message.assistant(f"answer {i}")) for i in range(6)
    ]
    await agent.run("question 6", session=InMemorySession([m for t in turns for m in t]))
    (request,) = summariser.requests
    assert isinstance(request.observer, _Upstream) and request.observer.agent == "a"
