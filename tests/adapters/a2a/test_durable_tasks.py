"""A task's run taken over by another replica, in one process: what it writes to the task.

The replica that claims a run (tests/scale/test_durable_a2a.py kills the
real one) has no request: :class:`TaskRuns` writes the task straight to the
task store. Here the run is handed to it as :class:`DurableRuns` hands it
(``updates`` with the finished steps, then ``settled``), over a task left
``working`` with a partial answer by a replica that died.
"""

from __future__ import annotations

import pytest
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Artifact, Part, Task, TaskState, TaskStatus

from agenthost.adapters.a2a.runs import PROTOCOL, RESUMED, TaskRuns
from agenthost.adapters.a2a.tasks import owner_of
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.adapters.durable import DurableRuns, LocalRunLog, RunRecord
from agenthost.agents import ChatAgent, Message, RunFinished, tool
from agenthost.agents.messages import TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply
from agenthost.app.memory import LRUMemoryManager

pytestmark = pytest.mark.anyio

calls: list[str] = []


@tool
def count() -> str:
    """Count one more."""
    calls.append("count")
    return str(len(calls))


def _answer(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "w0 w1 w2"
    return [TextPart(text="Counting."), ToolCallPart(id="c1", name="count", arguments="{}")]  # type: ignore[list-item]


AGENT = ChatAgent("counting", FunctionModel(_answer), tools=(count,))
DONE = [
    Message(
        role="assistant",
        parts=[TextPart(text="Counting."), ToolCallPart(id="c1", name="count", arguments="{}")],
    ),
    Message(role="tool", parts=[ToolResultPart(call_id="c1", name="count", content="1")]),
]
"""The step the replica that died had finished: its text, its call and the call's result."""


async def _taken_over(*, whole: bool) -> Task:
    calls.clear()
    store = InMemoryTaskStore(owner_resolver=owner_of("counting"))
    context = ServerCallContext(user=PrincipalUser("ann"))
    # As the dead replica left it: working, the answer streamed into the step it lost.
    partial = Artifact(artifact_id="a1", name="answer", parts=[Part(text="Counting.\n\nw0 w")])
    left = Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
        artifacts=[] if whole else [partial],
    )
    await store.save(left, context)
    runs = TaskRuns(
        DurableRuns(LocalRunLog()),
        LRUMemoryManager("a2a", max_sessions=10, ttl=60),
        {"counting": AGENT},
    )
    runs.task_stores["counting"] = store
    request = {
        "task": "t1",
        "context": "c1",
        "input": Message.user("go").model_dump(mode="json", exclude_none=True),
        "whole": whole,
        "artifact": "a1",
    }
    record = RunRecord("r1", PROTOCOL, "counting", "ann", request)
    result = None
    async for update in await runs.updates(record, list(DONE)):
        if isinstance(update, RunFinished):
            result = update.result
    assert result is not None
    result.output = "Counting.\n\n" + result.output  # as DurableRuns makes it whole
    await runs.settled(record, result, None)
    task = await store.get("t1", context)
    assert task is not None
    return task


async def test_the_artifact_starts_again_from_the_finished_steps_and_the_task_completes() -> None:
    task = await _taken_over(whole=False)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    (artifact,) = task.artifacts
    # Replaced (append: false) by the kept text, the lost "w0 w" gone; then the rest.
    assert artifact.parts[0].text == "Counting."
    assert "".join(p.text for p in artifact.parts) == "Counting.\n\nw0 w1 w2"
    assert calls == []  # the recorded tool result was not made again
    assert [m.parts[0].text for m in task.history] == [RESUMED]


async def test_a_blocking_request_taken_over_still_gets_one_whole_part() -> None:
    task = await _taken_over(whole=True)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [[p.text for p in a.parts] for a in task.artifacts] == [["Counting.\n\nw0 w1 w2"]]
    assert calls == []
