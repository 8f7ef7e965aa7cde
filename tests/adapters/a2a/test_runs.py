"""How runs map onto A2A tasks: input-required, tool progress, failures, refusals."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from a2a.client import Client
from a2a.types import GetTaskRequest, TaskState

from agenthost.agents import ASK_USER, ChatAgent, ModelBusy, ModelError, RunRefused, tool
from agenthost.agents.composition import AgentTool
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import Reply, call
from tests.adapters.a2a.support import (
    artifact_text,
    collect,
    final_task,
    in_process,
    paced_agent,
    sdk_client,
    user_message,
)

pytestmark = pytest.mark.anyio


def failing(name: str, error: Exception) -> ChatAgent:
    def reply(request: ModelRequest) -> Reply:
        raise error

    return ChatAgent(name, FunctionModel(reply))


@tool
def calculator(expression: str) -> str:
    """Adds two and two."""
    return "4"


ASKER = ScriptedModel(
    [call("ask_user", '{"question": "Which city?"}'), "Sunny in Paris."] * 2, name="asker"
)
AGENTS = {
    "asker": ChatAgent("asker", ASKER, tools=(ASK_USER,)),
    "counter": ChatAgent(
        "counter",
        ScriptedModel([call("calculator", '{"expression": "2+2"}'), "It is 4."] * 2),
        tools=(calculator,),
    ),
    "lead": ChatAgent(
        "lead",
        ScriptedModel([call("counter_agent", '{"task": "2+2"}'), "Counter says 4."]),
        tools=(
            AgentTool(
                ChatAgent(
                    "counter_agent",
                    ScriptedModel([call("calculator", '{"expression": "2+2"}'), "It is 4."]),
                    tools=(calculator,),
                )
            ),
        ),
    ),
    "broken": failing("broken", ModelError("the upstream exploded")),
    "busy": failing("busy", ModelBusy("rate limited", retry_after=3)),
    "refusing": failing("refusing", RunRefused("I do not do taxes.")),
    "buggy": failing("buggy", KeyError("internal detail")),
}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process(AGENTS) as client:
        yield client


async def client_for(http: httpx.AsyncClient, agent: str, *, streaming: bool = False) -> Client:
    return await sdk_client(
        f"http://localhost/a2a/{agent}", "JSONRPC", http=http, streaming=streaming
    )


async def test_a_question_to_the_user_is_input_required_and_the_reply_resumes_the_run(
    http: httpx.AsyncClient,
) -> None:
    async with await client_for(http, "asker") as client:
        asked = final_task(await collect(client, user_message("weather?")))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert asked.status.message.parts[0].text == "Which city?"
        reply = user_message(
            "Paris", task_id=asked.id, context_id=asked.context_id, message_id="m-2"
        )
        done = final_task(await collect(client, reply))
    assert done.id == asked.id and done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == "Sunny in Paris."
    answered = ASKER.requests[-1].messages[-1]
    assert answered.role == "tool" and answered.parts[0].content == "Paris"  # type: ignore[union-attr]


async def test_the_agents_tool_calls_show_as_working_updates(http: httpx.AsyncClient) -> None:
    async with await client_for(http, "counter", streaming=True) as client:
        events = await collect(client, user_message("2+2?"))
    notes = [
        e.status_update.status.message.parts[0].text
        for e in events
        if e.HasField("status_update") and e.status_update.status.message.parts
    ]
    assert "calling calculator" in notes


async def test_the_tool_calls_of_agents_working_for_it_show_too(http: httpx.AsyncClient) -> None:
    async with await client_for(http, "lead", streaming=True) as client:
        events = await collect(client, user_message("ask the counter"))
    notes = [
        e.status_update.status.message.parts[0].text
        for e in events
        if e.HasField("status_update") and e.status_update.status.message.parts
    ]
    assert notes[:2] == ["calling counter_agent", "counter_agent: calling calculator"]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.parametrize(
    ("agent", "state", "text"),
    [
        ("broken", TaskState.TASK_STATE_FAILED, "the upstream exploded"),
        ("busy", TaskState.TASK_STATE_FAILED, "busy"),
        ("refusing", TaskState.TASK_STATE_REJECTED, "I do not do taxes."),
        ("buggy", TaskState.TASK_STATE_FAILED, "failed unexpectedly"),
    ],
)
async def test_failures_and_refusals_end_the_task_with_a_readable_message(
    http: httpx.AsyncClient, agent: str, state: TaskState, text: str
) -> None:
    async with await client_for(http, agent) as client:
        task = final_task(await collect(client, user_message("do it")))
    assert task.status.state == state
    message = task.status.message.parts[0].text
    assert text in message and "Traceback" not in message


async def test_a_reply_that_names_only_its_task_continues_the_tasks_context(
    http: httpx.AsyncClient,
) -> None:
    async with await client_for(http, "asker") as client:
        asked = final_task(await collect(client, user_message("weather?")))
        reply = user_message("Lyon", task_id=asked.id, message_id="m-2")  # no context id
        done = final_task(await collect(client, reply))
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert done.context_id == asked.context_id


async def test_return_immediately_answers_at_once_and_the_run_goes_on() -> None:
    async with in_process({"paced": paced_agent(words=5, delay=0.05)}) as http:
        client = await client_for(http, "paced")
        async with client:
            request = user_message("go")
            request.configuration.return_immediately = True
            early = final_task(await collect(client, request))
            assert early.status.state in (
                TaskState.TASK_STATE_SUBMITTED,
                TaskState.TASK_STATE_WORKING,
            )
            for _ in range(100):
                task = await client.get_task(GetTaskRequest(id=early.id))
                if task.status.state == TaskState.TASK_STATE_COMPLETED:
                    break
                await anyio.sleep(0.05)
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert artifact_text(task) == "".join(f"w{i} " for i in range(5))
