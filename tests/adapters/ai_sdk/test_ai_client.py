"""The `ai` package's ``DefaultChatTransport``, ``readUIMessageStream`` and ``Chat`` (what
``useChat`` runs) against /ai-sdk over a socket, on agents built here
(test_served_ai_client.py: on ``agenthost serve``), with tests/clients/install.sh's Node 22."""

from __future__ import annotations

from typing import Any

import pytest

from agenthost.agents import ChatAgent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.ai_sdk.test_chat import AGENTS
from tests.adapters.ai_sdk.use_chat import require_client, run_use_chat, texts
from tests.adapters.approvals import RAN, WAS_DECLINED, Deleter
from tests.principals import transcript_model
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.slow

DELETER = Deleter()
SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"agent": "echo", "say": "hello there"},
    "tool": {"agent": "adder", "say": "2 + 3?"},
    "askUser": {"agent": "asker", "say": "hi", "answer": "Ada"},
    "approval": {"agent": "deleter", "say": "tidy up", "tool": "delete_file"},
    "twoTurns": {"agent": "t", "say": ["my name is Ada", "what is my name?"]},
    "failing": {"agent": "failing", "say": "hi"},
    "unknown": {"agent": "nobody"},
}


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    require_client()
    agents = {**AGENTS, "deleter": DELETER.agent, "t": ChatAgent("t", transcript_model())}
    app = create_app(Settings(adapters=["ai_sdk"], playground=False), agents)  # type: ignore[arg-type]
    with serve_in_thread(app, lifespan=True) as url:
        return run_use_chat(f"{url}/ai-sdk", SCENARIOS)


def test_text_and_usage(seen: dict[str, Any]) -> None:
    answer = seen["text"]
    assert answer["error"] is None
    assert texts(answer["message"]) == "hello there"
    usage = answer["message"]["metadata"]["usage"]
    assert usage["totalTokens"] > 0


def test_the_agents_tool(seen: dict[str, Any]) -> None:
    message = seen["tool"]["message"]
    [part] = [p for p in message["parts"] if p["type"] == "tool-add"]
    assert part["state"] == "output-available"
    assert part["input"] == {"a": 2, "b": 3} and part["output"] == "5"
    assert texts(message) == "Let me add. \n\nThe sum is 5."
    assert [p["type"] for p in message["parts"]].count("step-start") == 2


def test_ask_user_answered_as_a_tool_output(seen: dict[str, Any]) -> None:
    asked, answered = seen["askUser"]["asked"], seen["askUser"]["answered"]
    [part] = [p for p in asked["message"]["parts"] if p["type"] == "tool-ask_user"]
    assert part["state"] == "input-available"
    assert part["input"] == {"question": "What is your name?"}
    assert answered["error"] is None
    assert texts(answered["message"]) == "Nice to meet you, Ada."


def test_errors(seen: dict[str, Any]) -> None:
    assert seen["failing"]["error"] == "the upstream is busy"
    unknown = seen["unknown"]["error"]
    assert unknown is not None and "agent_not_found" in unknown


def test_an_approval_asked_and_approved_runs_the_tool_once(seen: dict[str, Any]) -> None:
    approved = seen["approval"]["approved"]
    [asked] = [p for p in approved["asked"]["parts"] if p["type"] == "tool-delete_file"]
    assert asked["state"] == "approval-requested"
    assert asked["input"] == {"path": "/tmp/notes.txt"}
    # The answer continues the same assistant message (the user's and one assistant's).
    assert approved["error"] is None and approved["count"] == 2
    message = approved["message"]
    assert message["id"] == approved["asked"]["id"] == approved["finished"][1]
    [part] = [p for p in message["parts"] if p["type"] == "tool-delete_file"]
    assert part["state"] == "output-available" and part["output"] == "deleted /tmp/notes.txt"
    assert part["approval"]["approved"] is True
    assert texts(message) == RAN
    # Both chats ran the tool at most once: the approved one once, the denied one never.
    assert DELETER.deleted == ["/tmp/notes.txt"]


def test_an_approval_denied_never_runs_the_tool(seen: dict[str, Any]) -> None:
    denied = seen["approval"]["denied"]
    assert denied["error"] is None and denied["count"] == 2
    [part] = [p for p in denied["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False
    assert texts(denied["message"]) == WAS_DECLINED


def test_two_turns_on_one_chat(seen: dict[str, Any]) -> None:
    # The chat's whole history goes with each request.
    turns = seen["twoTurns"]
    assert turns["error"] is None
    assert turns["texts"] == [
        "my name is Ada",
        "my name is Ada | my name is Ada | what is my name?",
    ]
