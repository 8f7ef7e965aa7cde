"""The `ai` package's ``DefaultChatTransport``, ``readUIMessageStream`` and ``Chat`` against
``agenthost serve`` with an API key, its agents configured in YAML on ``openai:`` models of
the fake upstream (tests/upstream.py), and their tools too: ``calculator``, ``ask_user``
and a Python function with ``approval: required``. tests/clients/ai_sdk/use_chat.mjs runs
every scenario in one Node process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.ai_sdk.use_chat import require_client, run_use_chat, texts
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
"""
SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"agent": "relay", "say": "hello there"},
    "tool": {"agent": "relay", "say": "calculate 2+3"},
    "askUser": {
        "agent": "relay",
        "say": 'use ask_user with {"question": "What is your name?"}',
        "answer": "Ada",
    },
    "approval": {
        "agent": "relay",
        "say": 'use delete_file with {"path": "/tmp/notes.txt"}',
        "tool": "delete_file",
    },
    "twoTurns": {"agent": "relay", "say": ["my name is Ada", "what is my name?"]},
    "failing": {"agent": "busy", "say": "hi"},
    "unknown": {"agent": "nobody"},
}


@pytest.fixture(scope="module")
def served(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """The server's /ai-sdk URL and the file that counts delete_file's runs."""
    require_client()
    folder = tmp_path_factory.mktemp("ai-sdk-served")
    with served_front_end("ai_sdk", CONFIG, upstream[1], folder, KEY) as (url, deleted):
        yield f"{url}/ai-sdk", deleted


@pytest.fixture(scope="module")
def seen(served: tuple[str, Path], upstream: tuple[FakeUpstream, str]) -> dict[str, Any]:
    """What the client ended with in each scenario; and the upstream requests it caused."""
    fake = upstream[0]
    first = len(fake.requests)
    seen = run_use_chat(served[0], SCENARIOS, key=KEY)
    seen["requests"] = fake.requests[first:]
    return seen


def test_text_streamed_with_usage_on_finish(seen: dict[str, Any]) -> None:
    answer = seen["text"]
    assert answer["error"] is None
    assert texts(answer["message"]) == "upstream says: hello there "
    # The upstream's counts: 2 words asked, 4 answered.
    usage = answer["message"]["metadata"]["usage"]
    assert usage == {"inputTokens": 2, "outputTokens": 4, "totalTokens": 6}


def test_the_agents_own_tool(seen: dict[str, Any]) -> None:
    answer = seen["tool"]
    assert answer["error"] is None
    message = answer["message"]
    [part] = [p for p in message["parts"] if p["type"] == "tool-calculator"]
    assert part["state"] == "output-available"
    assert part["input"] == {"expression": "2+3"} and part["output"] == "5"
    assert texts(message) == "The result is 5. "
    assert [p["type"] for p in message["parts"]].count("step-start") == 2


def test_ask_user_answered_as_a_tool_output(seen: dict[str, Any]) -> None:
    asked, answered = seen["askUser"]["asked"], seen["askUser"]["answered"]
    assert asked["error"] is None
    [part] = [p for p in asked["message"]["parts"] if p["type"] == "tool-ask_user"]
    assert part["state"] == "input-available"
    assert part["input"] == {"question": "What is your name?"}
    assert answered["error"] is None
    assert texts(answered["message"]) == "The result is Ada. "


def test_an_approval_approved_runs_the_tool_once_and_denied_never(
    seen: dict[str, Any], served: tuple[str, Path]
) -> None:
    approved, denied = seen["approval"]["approved"], seen["approval"]["denied"]
    for answer in (approved, denied):
        [asked] = [p for p in answer["asked"]["parts"] if p["type"] == "tool-delete_file"]
        assert asked["state"] == "approval-requested"
        assert asked["input"] == {"path": "/tmp/notes.txt"}
        # The answer continues the same assistant message (the user's and one assistant's).
        assert answer["error"] is None and answer["count"] == 2
        assert answer["message"]["id"] == answer["asked"]["id"] == answer["finished"][1]
    [part] = [p for p in approved["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert part["state"] == "output-available" and part["output"] == "deleted /tmp/notes.txt"
    assert part["approval"]["approved"] is True
    assert texts(approved["message"]) == "The result is deleted /tmp/notes.txt. "
    [part] = [p for p in denied["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False
    declined = "The user did not approve this call, so it did not run."
    assert texts(denied["message"]) == f"The result is {declined}. "
    # Both chats asked; the tool ran once, for the approved one.
    assert served[1].read_text() == "/tmp/notes.txt\n"


def test_two_turns_on_one_chat(seen: dict[str, Any]) -> None:
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


def test_a_failing_upstream_and_an_unknown_agent(seen: dict[str, Any]) -> None:
    assert seen["failing"]["error"] == "upstream model 'busy' is rate limited: Slow down."
    unknown = seen["unknown"]
    assert unknown["message"] is None
    # The transport throws the 404's body as its error.
    assert unknown["error"] == (
        '{"error":{"code":"agent_not_found","message":"agent \'nobody\' not found"}}'
    )
