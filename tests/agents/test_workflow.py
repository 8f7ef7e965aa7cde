"""Step workflows: transitions, re-validation, snapshots, the step limit and cancellation."""

import pytest
from pydantic import BaseModel

from agenthost.agents import (
    AgentError,
    ChatAgent,
    MaxStepsExceeded,
    RunFinished,
    SubAgentUpdate,
    TextDelta,
)
from agenthost.agents.composition import (
    END,
    PREV,
    SELF,
    START,
    AgentStep,
    FunctionStep,
    WorkflowAgent,
)
from agenthost.agents.models import FunctionModel, ModelRequest
from tests.blocking import Blocker

pytestmark = pytest.mark.anyio


class Essay(BaseModel):
    input: str
    draft: str = ""
    rounds: int = 0
    output: str = ""


def shout(request: ModelRequest) -> str:
    return request.messages[-1].text.upper()


def writer() -> ChatAgent:
    return ChatAgent("writer", FunctionModel(shout))


async def test_steps_move_through_the_state_and_every_snapshot_is_kept() -> None:
    def plan(state: Essay) -> None:
        state.draft = f"about {state.input}"

    async def review(state: Essay) -> str:
        state.rounds += 1
        return SELF if state.rounds < 2 else "finish"

    def finish(state: Essay) -> str:
        state.output = f"{state.draft} ({state.rounds} reviews)"
        return END

    workflow = WorkflowAgent(
        "essay",
        Essay,
        [
            FunctionStep("plan", plan),
            AgentStep("write", writer(), output="draft", input="draft"),
            FunctionStep("review", review),
            FunctionStep("finish", finish),
        ],
    )
    updates = [u async for u in workflow.run_stream("cats")]
    result = updates[-1]
    assert isinstance(result, RunFinished)
    assert result.result.output == "ABOUT CATS (2 reviews)"
    assert "".join(u.text for u in updates if isinstance(u, TextDelta)) == result.result.output
    assert any(isinstance(u, SubAgentUpdate) and u.agent == "write" for u in updates)
    steps = result.result.metadata["workflow"]["steps"]
    assert [s["step"] for s in steps] == ["plan", "write", "review", "review", "finish"]
    assert steps[0]["state"]["draft"] == "about cats"
    assert steps[1]["state"]["draft"] == "ABOUT CATS"
    assert [s["state"]["rounds"] for s in steps] == [0, 0, 1, 2, 2]
    assert result.result.usage.requests == 1


async def test_prev_and_start_go_back() -> None:
    visits: list[str] = []

    def first(state: Essay) -> None:
        visits.append("first")
        state.rounds += 1

    def second(state: Essay) -> str:
        visits.append("second")
        if state.rounds == 1:
            return PREV
        return START if state.rounds == 2 else END

    workflow = WorkflowAgent(
        "w", Essay, [FunctionStep("first", first), FunctionStep("second", second)]
    )
    await workflow.run("x")
    assert visits == ["first", "second", "first", "second", "first", "second"]


async def test_each_step_works_on_a_copy() -> None:
    def breaks_after_changing(state: Essay) -> None:
        state.draft = "half done"
        raise ValueError("oops")

    kept: list[Essay] = []

    def look(state: Essay) -> None:
        kept.append(state)

    workflow = WorkflowAgent("w", Essay, [FunctionStep("look", look)])
    await workflow.run("x")
    await workflow.run("y")
    assert kept[0] is not kept[1] and kept[0].input == "x"
    failing = WorkflowAgent("w", Essay, [FunctionStep("bad", breaks_after_changing)])
    with pytest.raises(AgentError, match="step 'bad' failed: oops"):
        await failing.run("x")


async def test_a_step_that_breaks_the_schema_fails_naming_the_field() -> None:
    def corrupt(state: Essay) -> None:
        state.rounds = "many"  # type: ignore[assignment]

    workflow = WorkflowAgent("w", Essay, [FunctionStep("corrupt", corrupt)])
    with pytest.raises(AgentError, match="step 'corrupt' left the state invalid: rounds:"):
        await workflow.run("x")


async def test_the_step_limit_stops_a_loop() -> None:
    workflow = WorkflowAgent("w", Essay, [FunctionStep("spin", lambda state: SELF)], max_steps=7)
    with pytest.raises(MaxStepsExceeded, match="did not reach END within 7 steps"):
        await workflow.run("x")


async def test_an_unknown_target_is_named() -> None:
    workflow = WorkflowAgent("w", Essay, [FunctionStep("a", lambda state: "nowhere")])
    with pytest.raises(AgentError, match="went to unknown step 'nowhere'; steps: a"):
        await workflow.run("x")


def test_mistakes_in_the_definition_are_refused_up_front() -> None:
    class Strict(BaseModel):
        input: str
        needed: int

    step = FunctionStep("a", lambda state: None)
    with pytest.raises(ValueError, match="need defaults"):
        WorkflowAgent("w", Strict, [step], output_field="needed")
    with pytest.raises(ValueError, match="has no field output2"):
        WorkflowAgent("w", Essay, [step], output_field="output2")
    with pytest.raises(ValueError, match="duplicate step names: a"):
        WorkflowAgent("w", Essay, [step, step])
    with pytest.raises(ValueError, match="reserved"):
        WorkflowAgent("w", Essay, [FunctionStep("END", lambda state: None)])


async def test_cancelling_the_run_cancels_the_running_step() -> None:
    blocker = Blocker()
    workflow = WorkflowAgent("w", Essay, [FunctionStep("wait", blocker.block)])
    await blocker.cancel_once_started(workflow.run, "x")
