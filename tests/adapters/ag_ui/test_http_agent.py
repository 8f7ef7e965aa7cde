"""``@ag-ui/client``'s ``HttpAgent`` (the official AG-UI client) against /ag-ui over a
socket, on agents built here (test_served_http_agent.py: on ``agenthost serve``).

tests/clients/ag_ui/http_agent.mjs runs every scenario in one Node process and prints
what the client saw as one line of JSON: text, the agent's own tool, a client-tool round
trip, a framework agent's state, two turns on one thread, an interrupt answered and
resumed, a tool approval approved and declined, abortRun (the server cancels the run), a
failing run, an unknown agent.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.app.server import create_app
from tests.adapters.ag_ui.clients import ag_ui_settings
from tests.adapters.ag_ui.http_agent import require_client, run_http_agent
from tests.adapters.ag_ui.test_runs import AGENTS
from tests.adapters.ag_ui.test_state import AGENTS as STATEFUL
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.slow

CANCELLED = threading.Event()


@tool
async def wait() -> str:
    """Wait a long time."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        CANCELLED.set()
        raise
    return "done"


def _waiter(request: ModelRequest) -> Reply:
    return call("wait") if request.messages[-1].role == "user" else "waited"


SLOW = ChatAgent("slow", FunctionModel(_waiter), tools=(wait,))
DELETER = Deleter()


SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"agent": "echo", "say": "hello there"},
    "ownTool": {"agent": "adder", "say": "2 + 3?"},
    "clientTool": {"agent": "weather", "say": "weather in Paris?"},
    "state": {"agent": "planner", "say": "plan it"},
    "twoTurns": {"agent": "t", "say": ["my name is Ada", "what is my name?"]},
    "interrupt": {"agent": "asker", "say": "hi", "answer": "Ada"},
    "approval": {"agent": "deleter", "say": "tidy up"},
    "failing": {"agent": "failing", "say": "hi"},
    "cancel": {"agent": "slow", "say": "wait", "abortAfter": "TOOL_CALL_END"},
    "unknown": {"agent": "nobody"},
}


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    """What the client saw in each scenario, from one run of the script."""
    require_client()
    app = create_app(
        ag_ui_settings(playground=False),
        {**AGENTS, "planner": STATEFUL["planner"], "slow": SLOW, "deleter": DELETER.agent},
    )
    with serve_in_thread(app, lifespan=True) as url:
        seen = run_http_agent(f"{url}/ag-ui", SCENARIOS)
        # Before the server stops (which would cancel whatever still runs).
        cancelled = CANCELLED.wait(10)
    seen["cancel"]["tool_cancelled"] = cancelled
    return seen


def test_text(seen: dict[str, Any]) -> None:
    text = seen["text"]
    assert text["error"] is None and text["text"] == "hello there"
    assert text["types"][0] == "RUN_STARTED" and text["types"][-1] == "RUN_FINISHED"


def test_the_agents_own_tool(seen: dict[str, Any]) -> None:
    own = seen["ownTool"]
    assert own["error"] is None
    assert own["calls"] == [{"name": "add", "arguments": '{"a": 2, "b": 3}'}]
    assert own["results"] == ["5"]
    assert own["text"] == "Let me add. \n\nThe sum is 5."


def test_a_client_tool_round_trip(seen: dict[str, Any]) -> None:
    client = seen["clientTool"]
    assert client["first"] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert client["call"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert client["error"] is None and client["text"] == "The weather: sunny"


def test_a_graphs_state_becomes_the_clients_state(seen: dict[str, Any]) -> None:
    stateful = seen["state"]
    assert stateful["error"] is None and stateful["text"] == "look, answer"
    final = {"steps": ["look", "answer"], "done": True}
    assert stateful["snapshots"] == [{"steps": ["look", "answer"]}, final]
    assert stateful["state"] == final
    assert stateful["types"][-2:] == ["STATE_SNAPSHOT", "RUN_FINISHED"]


def test_two_turns_on_one_thread(seen: dict[str, Any]) -> None:
    turns = seen["twoTurns"]
    assert turns["error"] is None
    assert turns["texts"] == [
        "my name is Ada",
        "my name is Ada | my name is Ada | what is my name?",
    ]


def test_an_interrupt_answered_and_resumed(seen: dict[str, Any]) -> None:
    asked = seen["interrupt"]
    assert asked["firstError"] is None
    assert asked["interrupts"] == [{"message": "What is your name?", "reason": "input_required"}]
    assert asked["error"] is None and asked["left"] == 0
    assert asked["text"].endswith("Nice to meet you, Ada.")


def test_a_tool_approval_approved_runs_once_and_declined_never(seen: dict[str, Any]) -> None:
    approval = seen["approval"]
    for answer in approval.values():
        assert answer["firstError"] is None and answer["error"] is None and answer["left"] == 0
        interrupt = answer["interrupt"]
        assert interrupt["reason"] == "tool_approval" and interrupt["message"] == QUESTION
        assert interrupt["toolCallId"]
    assert approval["approved"]["text"].endswith(RAN)
    assert approval["declined"]["text"].endswith(WAS_DECLINED)
    assert DELETER.deleted == ["/tmp/notes.txt"]  # the approved call, once


def test_abort_run_cancels_the_run(seen: dict[str, Any]) -> None:
    cancel = seen["cancel"]
    # The client ends its side with a RUN_ERROR of its own (code "abort").
    assert cancel["types"][-2:] == ["TOOL_CALL_END", "RUN_ERROR"]
    assert cancel["error"].startswith("abort:") and cancel["running"] is False
    # The stream closed: the server cancelled the tool it was running.
    assert cancel["tool_cancelled"] is True


def test_a_failing_run_and_an_unknown_agent(seen: dict[str, Any]) -> None:
    failing = seen["failing"]
    assert failing["types"] == ["RUN_STARTED", "RUN_ERROR"]
    assert failing["error"] == "RUN_ERROR busy: the upstream is busy"
    unknown = seen["unknown"]
    assert unknown["types"] == []
    assert unknown["error"] == (
        'HTTP 404: {"error":{"code":"agent_not_found","message":"agent \'nobody\' not found"}}'
    )
