from functools import partial

import anyio
import pytest

from agenthost.agents import (
    ChatAgent,
    InMemorySession,
    MaxStepsExceeded,
    Message,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    tool,
)
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator

pytestmark = pytest.mark.anyio


async def test_echo_answers_with_the_last_user_message() -> None:
    agent = ChatAgent("echo", EchoModel())
    result = await agent.run(
        [Message.user("first"), Message.assistant("x"), Message.user("say  this ")]
    )
    assert result.output == "say  this "
    assert (result.usage.input_tokens, result.usage.output_tokens) == (4, 2)
    updates = [u async for u in agent.run_stream("one two three")]
    assert [u.text for u in updates if isinstance(u, TextDelta)] == ["one ", "two ", "three"]
    assert isinstance(updates[-1], RunFinished)
    assert updates[-1].result.output == "one two three"


async def test_tool_loop_runs_tools_and_returns_the_final_answer() -> None:
    model = ScriptedModel([call("calculator", '{"expression": "17+25"}'), "It is 42."])
    agent = ChatAgent("calc", model, tools=(calculator,), instructions="Use tools.")
    updates = [u async for u in agent.run_stream("what is 17+25?")]
    started = [u for u in updates if isinstance(u, ToolCallStarted)]
    finished = [u for u in updates if isinstance(u, ToolCallFinished)]
    assert [s.call.name for s in started] == ["calculator"]
    assert finished[0].result.content == "42"
    result = updates[-1].result  # type: ignore[union-attr]
    assert result.output == "It is 42."
    assert [m.role for m in result.new_messages] == ["user", "assistant", "tool", "assistant"]
    assert result.usage.requests == 2
    # The second model request saw the instructions, the call and its result.
    second = model.requests[1].messages
    assert second[0] == Message.system("Use tools.")
    assert second[-1].parts[0].content == "42"  # type: ignore[union-attr]
    assert model.requests[0].tools[0].name == "calculator"


async def test_streamed_and_plain_runs_give_the_same_result() -> None:
    replies = [["Let me check.", call("calculator", '{"expression": "2*3"}')], "Six."]
    plain = await ChatAgent("a", ScriptedModel(replies), tools=(calculator,)).run("2*3?")
    streamed = [
        u
        async for u in ChatAgent("a", ScriptedModel(replies), tools=(calculator,)).run_stream(
            "2*3?"
        )
    ]
    text = "".join(u.text for u in streamed if isinstance(u, TextDelta))
    final = streamed[-1].result  # type: ignore[union-attr]
    assert plain.output == final.output == text == "Let me check.\n\nSix."
    assert plain.new_messages == final.new_messages


async def test_a_failing_tool_goes_back_to_the_model() -> None:
    @tool
    def explode() -> str:
        """Fails."""
        raise ValueError("no fuel")

    def reply(request: ModelRequest) -> str | list[object]:
        last = request.messages[-1]
        if last.role == "tool":
            return f"tool said: {last.parts[0].content}"  # type: ignore[union-attr]
        return [call("explode"), call("missing")]  # type: ignore[list-item]

    result = await ChatAgent("x", FunctionModel(reply), tools=(explode,)).run("go")  # type: ignore[arg-type]
    tool_message = result.new_messages[2]
    errors = [p.is_error for p in tool_message.parts]  # type: ignore[union-attr]
    assert errors == [True, True]
    assert "explode failed: no fuel" in result.output or "no fuel" in tool_message.parts[0].content  # type: ignore[union-attr]
    assert "unknown tool 'missing'" in tool_message.parts[1].content  # type: ignore[union-attr]


async def test_tool_calls_of_one_step_run_concurrently() -> None:
    # Each tool waits for the other: run one after the other, they would deadlock.
    events = {"a": anyio.Event(), "b": anyio.Event()}

    @tool
    async def wait_for(me: str, other: str) -> str:
        """Meet the other call."""
        events[me].set()
        await events[other].wait()
        return me

    model = ScriptedModel(
        [
            [
                call("wait_for", '{"me": "a", "other": "b"}'),
                call("wait_for", '{"me": "b", "other": "a"}'),
            ],
            "met",
        ]
    )
    with anyio.fail_after(5):
        result = await ChatAgent("x", model, tools=(wait_for,)).run("go")
    assert result.output == "met"


async def test_the_step_limit_ends_an_endless_loop() -> None:
    model = FunctionModel(lambda request: call("calculator", '{"expression": "1"}'))
    with pytest.raises(MaxStepsExceeded, match="within 3 model steps"):
        await ChatAgent("x", model, tools=(calculator,), max_steps=3).run("loop")


async def test_history_lives_in_the_session_not_the_agent() -> None:
    seen: list[list[str]] = []

    def reply(request: ModelRequest) -> str:
        seen.append([m.text for m in request.messages])
        return f"reply {len(request.messages)}"

    agent = ChatAgent("x", FunctionModel(reply))
    one, two = InMemorySession(), InMemorySession()
    await agent.run("a1", session=one)
    await agent.run("b1", session=two)
    await agent.run("a2", session=one)
    assert seen[2] == ["a1", "reply 1", "a2"]
    assert [m.text for m in two.messages] == ["b1", "reply 1"]
    await agent.run("no session")
    assert seen[3] == ["no session"]


async def test_a_cancelled_run_saves_nothing_and_stops_its_tools() -> None:
    tool_started, tool_cancelled = anyio.Event(), anyio.Event()

    @tool
    async def slow() -> str:
        """Takes forever."""
        tool_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            tool_cancelled.set()
        return "never"

    session = InMemorySession([Message.user("earlier"), Message.assistant("earlier reply")])
    agent = ChatAgent("x", ScriptedModel([call("slow"), "done"]), tools=(slow,))
    async with anyio.create_task_group() as group:
        group.start_soon(partial(agent.run, "start", session=session))
        await tool_started.wait()
        group.cancel_scope.cancel()
    assert tool_cancelled.is_set()
    assert [m.text for m in session.messages] == ["earlier", "earlier reply"]


async def test_closing_a_stream_early_saves_nothing() -> None:
    session = InMemorySession()
    stream = ChatAgent("x", EchoModel()).run_stream("one two three", session=session)
    assert await anext(stream) == TextDelta("one ")
    await stream.aclose()
    assert session.messages == []
