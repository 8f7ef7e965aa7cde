"""A run that ends waiting for the client: client tools and ``ask_user``, then resumed."""

import pytest

from agenthost.agents import (
    ASK_USER,
    ChatAgent,
    ClientTool,
    InMemorySession,
    Message,
    RunFinished,
    RunOptions,
    ToolCallStarted,
    ToolResultPart,
    answer_pending,
    question_of,
)
from agenthost.agents.models import ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator

pytestmark = pytest.mark.anyio

WEATHER = ClientTool("get_weather", "The weather in a city.", {"type": "object"})


async def test_a_client_tool_call_ends_the_run_waiting_and_its_result_resumes_it() -> None:
    weather = call("get_weather", '{"city": "Oslo"}')
    model = ScriptedModel(["Checking.", weather, "It is sunny in Oslo."])
    agent = ChatAgent("a", model)
    session = InMemorySession()
    options = RunOptions(tools=[WEATHER])
    first = await agent.run("hi", session=session, options=options)
    assert (first.output, first.finish_reason, first.awaiting_client) == (
        "Checking.",
        "stop",
        False,
    )

    second = await agent.run("weather in Oslo?", session=session, options=options)
    assert second.finish_reason == "tool_calls" and second.pending == [weather]
    # The waiting turn is saved whole: the assistant's call is in the session.
    assert session.messages[-1].tool_calls == [weather]

    answer = Message(
        role="tool",
        parts=[ToolResultPart(call_id=weather.id, name="get_weather", content="sunny")],
    )
    third = await agent.run(answer, session=session, options=options)
    assert third.output == "It is sunny in Oslo." and not third.awaiting_client
    seen = model.requests[-1].messages
    assert seen[-2].tool_calls == [weather] and seen[-1] == answer


async def test_own_tools_run_and_client_tools_wait_in_the_same_step() -> None:
    own, theirs = call("calculator", '{"expression": "2+2"}'), call("get_weather", "{}")
    model = ScriptedModel([[own, theirs]])
    agent = ChatAgent("a", model, tools=(calculator,))
    updates = [u async for u in agent.run_stream("x", options=RunOptions(tools=[WEATHER]))]
    assert [u.call.name for u in updates if isinstance(u, ToolCallStarted)] == ["calculator"]
    result = updates[-1]
    assert isinstance(result, RunFinished)
    assert result.result.pending == [theirs]
    assert [m.role for m in result.result.new_messages] == ["user", "assistant", "tool"]


async def test_ask_user_is_a_question_the_reply_answers() -> None:
    ask = call("ask_user", '{"question": "Which city?"}')
    model = ScriptedModel([ask, "Oslo it is."])
    agent = ChatAgent("a", model, tools=(ASK_USER,))
    session = InMemorySession()
    waiting = await agent.run("weather?", session=session)
    assert [question_of(c) for c in waiting.pending] == ["Which city?"]
    assert question_of(call("other")) is None
    done = await agent.run(answer_pending(waiting.pending, "Oslo"), session=session)
    assert done.output == "Oslo it is."
    result = model.requests[-1].messages[-1].parts[0]
    assert isinstance(result, ToolResultPart) and result.content == "Oslo"
