"""``@ag-ui/client``'s ``HttpAgent`` against ``agenthost serve`` with an API key, its agents
configured in YAML on ``openai:`` models of the fake upstream (tests/upstream.py), and
their tools too: ``calculator``, ``ask_user`` and a Python function with ``approval:
required``. tests/clients/ag_ui/http_agent.mjs runs every scenario in one Node process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.ag_ui.http_agent import require_client, run_http_agent
from tests.adapters.approvals import QUESTION
from tests.adapters.served_front_end import served_front_end
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.slow

KEY = "front-end-key-0123456789"
CONFIG = """
agents:
  - name: relay
    model: openai:gpt-front-end
    model_settings: {upstream}
    tools:
      - calculator
      - ask_user
      - {{tool: "tests.adapters.served_front_end:delete_file", approval: required}}
  - {{name: busy, model: "openai:busy", model_settings: {upstream}}}
  - {{name: slow, model: "openai:slow", model_settings: {upstream}}}
"""
DELETE = 'use delete_file with {"path": "/tmp/notes.txt"}'
SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"agent": "relay", "say": "hello there"},
    "ownTool": {"agent": "relay", "say": "calculate 2+3"},
    "clientTool": {"agent": "relay", "say": 'use get_weather with {"city": "Paris"}'},
    "twoTurns": {"agent": "relay", "say": ["my name is Ada", "what is my name?"]},
    "interrupt": {
        "agent": "relay",
        "say": 'use ask_user with {"question": "What is your name?"}',
        "answer": "Ada",
    },
    "approval": {"agent": "relay", "say": DELETE},
    "failing": {"agent": "busy", "say": "hi"},
    "cancel": {"agent": "slow", "say": "go", "abortAfter": "TEXT_MESSAGE_CONTENT"},
    "unknown": {"agent": "nobody"},
}


@pytest.fixture(scope="module")
def served(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """The server's /ag-ui URL and the file that counts delete_file's runs."""
    require_client()
    folder = tmp_path_factory.mktemp("ag-ui-served")
    with served_front_end("ag_ui", CONFIG, upstream[1], folder, KEY) as (url, deleted):
        yield f"{url}/ag-ui", deleted


@pytest.fixture(scope="module")
def seen(served: tuple[str, Path], upstream: tuple[FakeUpstream, str]) -> dict[str, Any]:
    """What the client saw in each scenario; and the upstream requests it caused."""
    fake = upstream[0]
    first, abandoned = len(fake.requests), fake.abandoned
    seen = run_http_agent(served[0], SCENARIOS, key=KEY)
    # The client left the slow stream: the server closes its own to the upstream.
    deadline = time.monotonic() + 10
    while fake.abandoned == abandoned and time.monotonic() < deadline:
        time.sleep(0.05)
    seen["cancel"]["upstream_abandoned"] = fake.abandoned - abandoned
    seen["requests"] = fake.requests[first:]
    return seen


def test_text_streamed_with_usage_on_finish(seen: dict[str, Any]) -> None:
    text = seen["text"]
    assert text["error"] is None and text["text"] == "upstream says: hello there "
    assert text["types"][:2] == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    # Word by word, as the upstream streamed it.
    assert text["types"].count("TEXT_MESSAGE_CONTENT") >= 4
    assert text["types"][-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    # The upstream's counts: 2 words asked, 4 answered.
    assert text["usage"] == [{"inputTokens": 2, "outputTokens": 4, "totalTokens": 6}]


def test_the_agents_own_tool(seen: dict[str, Any]) -> None:
    own = seen["ownTool"]
    assert own["error"] is None
    assert own["calls"] == [{"name": "calculator", "arguments": '{"expression": "2+3"}'}]
    assert own["results"] == ["5"]
    assert own["text"] == "The result is 5. "
    assert own["types"].index("TOOL_CALL_RESULT") > own["types"].index("TOOL_CALL_END")


def test_a_client_tool_round_trip(seen: dict[str, Any]) -> None:
    client = seen["clientTool"]
    assert client["first"] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        *["TOOL_CALL_ARGS"] * len(client["first"][2:-2]),
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert client["call"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert client["error"] is None and client["text"] == "The result is sunny. "


def test_two_turns_on_one_thread(seen: dict[str, Any]) -> None:
    turns = seen["twoTurns"]
    assert turns["error"] is None
    assert turns["texts"] == ["upstream says: my name is Ada ", "upstream says: what is my name? "]
    # The second turn reached the model with the first.
    [second] = [r for r in seen["requests"] if r["messages"][-1]["content"] == "what is my name?"]
    said = [(m["role"], m["content"].strip()) for m in second["messages"]]
    assert said == [
        ("user", "my name is Ada"),
        ("assistant", "upstream says: my name is Ada"),
        ("user", "what is my name?"),
    ]


def test_an_interrupt_answered_and_resumed(seen: dict[str, Any]) -> None:
    asked = seen["interrupt"]
    assert asked["firstError"] is None
    assert asked["interrupts"] == [{"message": "What is your name?", "reason": "input_required"}]
    assert asked["error"] is None and asked["left"] == 0
    assert asked["text"] == "The result is Ada. "


def test_a_tool_approval_approved_runs_once_and_declined_never(
    seen: dict[str, Any], served: tuple[str, Path]
) -> None:
    approval = seen["approval"]
    for answer in approval.values():
        assert answer["firstError"] is None and answer["error"] is None and answer["left"] == 0
        interrupt = answer["interrupt"]
        assert interrupt["reason"] == "tool_approval" and interrupt["message"] == QUESTION
        assert interrupt["toolCallId"]
    assert approval["approved"]["text"] == "The result is deleted /tmp/notes.txt. "
    declined = "The user did not approve this call, so it did not run."
    assert approval["declined"]["text"] == f"The result is {declined}. "
    # Both threads asked; the tool ran once, for the approved one.
    assert served[1].read_text() == "/tmp/notes.txt\n"


def test_abort_run_stops_the_upstream_stream(seen: dict[str, Any]) -> None:
    cancel = seen["cancel"]
    assert "TEXT_MESSAGE_CONTENT" in cancel["types"] and cancel["types"][-1] == "RUN_ERROR"
    assert cancel["error"].startswith("abort:") and cancel["running"] is False
    assert cancel["upstream_abandoned"] == 1


def test_a_failing_upstream_and_an_unknown_agent(seen: dict[str, Any]) -> None:
    failing = seen["failing"]
    assert failing["types"] == ["RUN_STARTED", "RUN_ERROR"]
    assert failing["error"] == "RUN_ERROR busy: upstream model 'busy' is rate limited: Slow down."
    assert failing["metadata"] == {"kind": "busy", "retryable": True, "retryAfter": 7}
    unknown = seen["unknown"]
    assert unknown["types"] == []
    assert unknown["error"] == (
        'HTTP 404: {"error":{"code":"agent_not_found","message":"agent \'nobody\' not found"}}'
    )
