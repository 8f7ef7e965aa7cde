"""A framework agent's state over AG-UI: ``STATE_SNAPSHOT`` after each step that changed it
(a LangGraph graph's channels, an ADK run's session state); none from an agent without state."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import EventType
from google.adk.agents import BaseAgent as ADKBaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event, EventActions
from google.genai import types as genai
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from agenthost.agents import ChatAgent
from agenthost.agents.frameworks.adk import ADKAgent
from agenthost.agents.frameworks.langgraph import LangGraphAgent
from agenthost.agents.models import EchoModel
from tests.adapters.ag_ui.clients import ag_ui_client, run, run_input, text_of, types, user

pytestmark = pytest.mark.anyio

E = EventType


class Plan(MessagesState):
    steps: list[str]
    done: bool
    client: Any  # not JSON: never shown


def planner() -> Any:
    """Plans two steps (keeping an object no JSON can carry), then answers and is done."""

    def plan(state: Plan) -> dict[str, Any]:
        return {"steps": ["look", "answer"], "client": object()}

    def answer(state: Plan) -> dict[str, Any]:
        return {"messages": [AIMessage(content=", ".join(state["steps"]))], "done": True}

    builder = StateGraph(Plan)
    builder.add_node("plan", plan)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def chatter() -> Any:
    """A graph over messages only: no state to show."""
    builder = StateGraph(MessagesState)
    builder.add_node("say", lambda state: {"messages": [AIMessage(content="hi")]})
    builder.add_edge(START, "say")
    builder.add_edge("say", END)
    return builder.compile()


class Moody(ADKBaseAgent):
    """An ADK agent that writes its session state (one key ADK shares per user) as it answers."""

    async def _run_async_impl(self, ctx: InvocationContext):  # type: ignore[no-untyped-def, override]
        for mood in ("curious", "happy"):
            content = genai.Content(role="model", parts=[genai.Part(text=f"I am {mood}.")])
            actions = EventActions(state_delta={"mood": mood, "user:name": "Ada"})
            yield Event(
                author=self.name, invocation_id=ctx.invocation_id, content=content, actions=actions
            )


AGENTS = {
    "planner": LangGraphAgent("planner", planner()),
    "chatter": LangGraphAgent("chatter", chatter()),
    "moody": ADKAgent("moody", Moody(name="moody")),
    "echo": ChatAgent("echo", EchoModel()),
}


def snapshots(events: list[Any]) -> list[dict[str, Any]]:
    return [e.snapshot for e in events if e.type == E.STATE_SNAPSHOT]


async def test_a_graph_shows_its_state_after_each_step_without_messages_or_objects() -> None:
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, "planner", run_input([user("plan it")]))
    assert snapshots(events) == [
        {"steps": ["look", "answer"]},
        {"steps": ["look", "answer"], "done": True},
    ]
    kinds = types(events)
    assert kinds[0] == E.RUN_STARTED and kinds[-1] == E.RUN_FINISHED
    assert kinds[-2] == E.STATE_SNAPSHOT  # the state the run ended with, last
    assert kinds.index(E.STATE_SNAPSHOT) < kinds.index(E.TEXT_MESSAGE_START)
    assert text_of(events) == "look, answer"
    # A snapshot never interrupts a text message: each one it follows is ended first.
    assert kinds[kinds.index(E.TEXT_MESSAGE_END) + 1] == E.STATE_SNAPSHOT


async def test_an_adk_run_shows_the_state_its_events_wrote_but_not_shared_keys() -> None:
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, "moody", run_input([user("how are you?")]))
    assert snapshots(events) == [{"mood": "curious"}, {"mood": "happy"}]
    assert text_of(events) == "I am curious.\n\nI am happy."
    assert types(events)[-2:] == [E.STATE_SNAPSHOT, E.RUN_FINISHED]


@pytest.mark.parametrize("agent", ["echo", "chatter"])
async def test_an_agent_without_state_sends_no_state_event(agent: str) -> None:
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, agent, run_input([user("hello")]))
    assert types(events)[-1] == E.RUN_FINISHED and text_of(events)
    assert not [e for e in events if e.type.name.startswith("STATE_")]


async def test_the_state_a_client_sends_is_accepted_and_not_given_to_the_graph() -> None:
    body = run_input([user("plan it")], state={"steps": ["from the client"], "done": False})
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, "planner", body)
    # Given to the graph, it would be the first state shown (LangGraph's input values).
    assert snapshots(events) == [
        {"steps": ["look", "answer"]},
        {"steps": ["look", "answer"], "done": True},
    ]
