"""A LangGraph graph (on LangChain's fake chat model) served over /v1 through the entry point."""

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from agenthost.agents import (
    InMemorySession,
    Message,
    RunFinished,
    StateSnapshot,
    ToolCallPart,
    ToolResultPart,
)
from agenthost.agents.frameworks.langgraph import LangGraphAgent, from_langchain, to_langchain
from agenthost.app.registry import Registry
from tests.completions import complete
from tests.conftest import openai_client

pytestmark = pytest.mark.anyio


def graph() -> Any:
    """A model node that answers with tokens, then a plain node that counts the messages."""
    answers = iter([AIMessage(content=f"answer number {n}") for n in range(1, 20)])
    model = GenericFakeChatModel(messages=answers)

    async def think(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def count(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content=f"({len(state['messages'])} messages)")]}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("count", count)
    builder.add_edge(START, "think")
    builder.add_edge("think", "count")
    builder.add_edge("count", END)
    return builder.compile()


def registry() -> Registry:
    served = Registry.with_defaults()
    served.add("graph", graph(), "A LangGraph graph.")
    return served


def test_the_entry_point_registers_compiled_graphs() -> None:
    assert isinstance(registry()["graph"], LangGraphAgent)


async def test_served_over_chat_completions_streamed_and_not() -> None:
    history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]
    async with openai_client(registry()) as client:
        (plain,) = await complete(client, "graph", history, stream=False)
        pieces = await complete(client, "graph", history, stream=True)
    assert plain == "answer number 1\n\n(4 messages)"
    assert "".join(pieces) == "answer number 2\n\n(4 messages)"
    assert "answer" in pieces and "number" in pieces  # the model's tokens, as they came


async def test_a_session_keeps_what_the_graph_added() -> None:
    session = InMemorySession()
    agent = registry()["graph"]
    await agent.run("hello", session=session)
    result = await agent.run("again", session=session)
    assert result.output == "answer number 2\n\n(5 messages)"
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant"] * 2
    assert result.usage.requests == 2


def test_history_converts_both_ways() -> None:
    call = ToolCallPart(id="c1", name="lookup", arguments='{"q":1}')
    ours = [
        Message.system("Be brief."),
        Message.user("hi"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[ToolResultPart(call_id="c1", name="lookup", content="42")]),
        Message.assistant("It is 42."),
    ]
    theirs = to_langchain(ours)
    assert isinstance(theirs[3], ToolMessage) and theirs[3].tool_call_id == "c1"
    assert [m.model_dump() for m in from_langchain(theirs)] == [m.model_dump() for m in ours]


class Topic(MessagesState):
    topic: str
    found: list[str]


def researcher() -> Any:
    """Picks a topic, then answers with what it found: state beside the messages."""

    def pick(state: Topic) -> dict[str, Any]:
        return {"topic": state["messages"][-1].text}

    def answer(state: Topic) -> dict[str, Any]:
        found = [f"{state['topic']} is old", f"{state['topic']} is new"]
        return {"messages": [AIMessage(content="; ".join(found))], "found": found}

    builder = StateGraph(Topic)
    builder.add_node("pick", pick)
    builder.add_node("answer", answer)
    builder.add_edge(START, "pick")
    builder.add_edge("pick", "answer")
    builder.add_edge("answer", END)
    return builder.compile()


async def test_a_stream_reports_the_state_after_each_step_and_other_protocols_ignore_it() -> None:
    agent = LangGraphAgent("researcher", researcher())
    updates = [u async for u in agent.run_stream("tea")]
    assert [u.state for u in updates if isinstance(u, StateSnapshot)] == [
        {"topic": "tea"},
        {"topic": "tea", "found": ["tea is old", "tea is new"]},
    ]
    final = updates[-1]
    assert isinstance(final, RunFinished) and final.result.output == "tea is old; tea is new"
    assert final.result.metadata == {}  # the state is shown, never part of the result
    served = Registry.with_defaults()
    served.add("researcher", researcher(), "A graph with state.")
    async with openai_client(served) as client:
        pieces = await complete(
            client, "researcher", [{"role": "user", "content": "tea"}], stream=True
        )
    assert "".join(pieces) == "tea is old; tea is new"
