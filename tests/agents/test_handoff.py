"""Agent as a tool: the sub-agent's view, its nested updates, its questions, the depth limit."""

import anyio
import pytest

from agenthost.agents import (
    ASK_USER,
    ChatAgent,
    InMemorySession,
    Message,
    ModelError,
    RunFinished,
    SubAgentUpdate,
    TextDelta,
    ToolCallFinished,
)
from agenthost.agents.composition import MAX_DEPTH, AgentTool, history_view
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import call

pytestmark = pytest.mark.anyio


def task(text: str) -> str:
    return '{"task": "' + text + '"}'


async def test_the_sub_agent_answers_and_its_text_is_the_tool_result() -> None:
    expert = ChatAgent("expert", ScriptedModel(["Paris is the capital."]), instructions="Expert.")
    lead = ChatAgent(
        "lead",
        ScriptedModel([call("expert", task("capital of France?")), "The expert says Paris."]),
        tools=(AgentTool(expert),),
    )
    updates = [u async for u in lead.run_stream("Where is the capital of France?")]
    nested = [u for u in updates if isinstance(u, SubAgentUpdate)]
    assert {u.agent for u in nested} == {"expert"}
    assert "".join(u.update.text for u in nested if isinstance(u.update, TextDelta)) == (
        "Paris is the capital."
    )
    assert isinstance(nested[-1].update, RunFinished)
    (finished,) = [u for u in updates if isinstance(u, ToolCallFinished)]
    assert finished.result.content == "Paris is the capital." and not finished.result.is_error
    answer = "".join(u.text for u in updates if isinstance(u, TextDelta))
    assert answer.endswith("The expert says Paris.") and "capital." not in answer
    result = updates[-1]
    assert isinstance(result, RunFinished) and result.result.usage.requests == 3


async def test_the_sub_agent_sees_the_callers_history_up_to_its_last_answer() -> None:
    seen: list[list[Message]] = []

    def expert_model(request: ModelRequest) -> str:
        seen.append(list(request.messages))
        return "done"

    expert = ChatAgent("expert", FunctionModel(expert_model), instructions="Expert.")
    lead = ChatAgent(
        "lead",
        ScriptedModel([call("expert", task("summarise")), "ok"]),
        instructions="Lead.",
        tools=(AgentTool(expert),),
    )
    history = [Message.user("hello"), Message.assistant("hi there")]
    session = InMemorySession(history)
    await lead.run("please summarise", session=session)
    (messages,) = seen
    # Its own instructions, the caller's finished exchange, then the task; not the
    # caller's instructions, current question or pending tool call.
    assert [(m.role, m.text) for m in messages] == [
        ("system", "Expert."),
        ("user", "hello"),
        ("assistant", "hi there"),
        ("user", "summarise"),
    ]
    assert len(session.messages) == 6  # the caller's session only; the view is read-only


def test_the_view_ends_at_the_last_answer_that_calls_no_tool() -> None:
    pending = Message(role="assistant", parts=[call("expert")])
    messages = [Message.system("s"), Message.user("a"), Message.assistant("b"), Message.user("c")]
    assert [m.text for m in history_view([*messages, pending])] == ["a", "b"]


async def test_a_sub_agent_asking_the_user_comes_back_as_its_question() -> None:
    asker = ChatAgent(
        "asker",
        ScriptedModel([call("ask_user", '{"question": "Which city?"}')]),
        tools=(ASK_USER,),
    )
    lead = ChatAgent(
        "lead",
        ScriptedModel([call("asker", task("weather")), "I need to know the city."]),
        tools=(AgentTool(asker),),
    )
    updates = [u async for u in lead.run_stream("weather?")]
    (finished,) = [u for u in updates if isinstance(u, ToolCallFinished)]
    assert "asker needs an answer before it can finish: Which city?" in finished.result.content


async def test_a_failing_sub_agent_is_an_error_result_not_a_failed_run() -> None:
    def upstream_down(request: ModelRequest) -> str:
        raise ModelError("upstream unreachable")

    broken = ChatAgent("broken", FunctionModel(upstream_down))
    lead = ChatAgent(
        "lead",
        ScriptedModel([call("broken", task("x")), call("broken", "{}"), "it failed"]),
        tools=(AgentTool(broken),),
    )
    updates = [u async for u in lead.run_stream("go")]
    failed, invalid = [u.result for u in updates if isinstance(u, ToolCallFinished)]
    assert failed.is_error and failed.content == "broken failed: upstream unreachable"
    assert invalid.is_error and "task: Field required" in invalid.content
    assert isinstance(updates[-1], RunFinished) and updates[-1].result.output == "it failed"


async def test_handoffs_deeper_than_the_limit_are_refused() -> None:
    def always_delegate(request: ModelRequest) -> object:
        last = request.messages[-1]
        if last.role == "tool":
            return last.parts[0].content  # type: ignore[union-attr]
        return call("self", task("again"))

    looping = ChatAgent("self", FunctionModel(always_delegate))  # type: ignore[arg-type]
    looping.options = looping.options.merged(type(looping.options)(tools=(AgentTool(looping),)))
    with anyio.fail_after(10):
        result = await looping.run("go")
    assert f"handoff deeper than {MAX_DEPTH} agents refused" in result.output


async def test_concurrent_callers_do_not_share_the_sub_agents_state() -> None:
    def echo_task(request: ModelRequest) -> str:
        return f"done: {request.messages[-1].text}"

    expert = ChatAgent("expert", FunctionModel(echo_task))
    outputs: dict[str, str] = {}

    async def ask(name: str) -> None:
        lead = ChatAgent(
            "lead",
            FunctionModel(
                lambda r: (
                    r.messages[-1].parts[0].content  # type: ignore[union-attr]
                    if r.messages[-1].role == "tool"
                    else call("expert", task(name))
                )
            ),
            tools=(AgentTool(expert),),
        )
        outputs[name] = (await lead.run(name)).output

    async with anyio.create_task_group() as group:
        for name in ("alice", "bob", "carol"):
            group.start_soon(ask, name)
    assert outputs == {n: f"done: {n}" for n in ("alice", "bob", "carol")}
