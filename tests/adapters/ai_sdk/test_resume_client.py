"""``useChat({resume: true})`` with the `ai` package's ``Chat`` and ``DefaultChatTransport``
(tests/clients/ai_sdk/resume.mjs) against /ai-sdk with resume on: a stream that drops
mid-message is picked up again and the whole message is rebuilt."""

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
from tests.adapters.ai_sdk.test_ai_client import CLIENT, NODE, NODE_DIR, ROOT, texts
from tests.adapters.ai_sdk.test_resume import GATE, RELEASE, SLOW
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "tests" / "clients" / "ai_sdk" / "resume.mjs"


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    if not (NODE.exists() and CLIENT.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the ai package is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the ai package: run tests/clients/install.sh")
    target = NODE_DIR / "ai_sdk"
    target.mkdir(exist_ok=True)
    script = Path(shutil.copy(SCRIPT, target / SCRIPT.name))
    GATE.reset()
    settings = Settings(adapters=["ai_sdk"], playground=False, ai_sdk_resume=True)  # type: ignore[call-arg]
    app = create_app(settings, {"slow": SLOW, "release": RELEASE})  # type: ignore[arg-type]
    with serve_in_thread(app, lifespan=True) as url:
        try:
            done = subprocess.run(
                [str(NODE), str(script)],
                env={**os.environ, "AI_SDK_URL": f"{url}/ai-sdk"},
                capture_output=True,
                timeout=120,
                check=False,
            )
        finally:
            GATE.opened.set()
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout.decode().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_drop_is_a_network_error(seen: dict[str, Any]) -> None:
    assert seen["dropped"] == {"status": "error", "error": "network error"}


def test_the_resumed_stream_rebuilds_the_whole_message(seen: dict[str, Any]) -> None:
    assert seen["status"] == "ready"
    user, assistant = seen["messages"]
    assert user["role"] == "user" and assistant["role"] == "assistant"
    assert texts(assistant) == "Working on it. \n\nAll done."
    [call] = [p for p in assistant["parts"] if p["type"] == "tool-wait"]
    assert call["state"] == "output-available" and call["output"] == "released"
    assert [p["type"] for p in assistant["parts"]].count("step-start") == 2
    assert assistant["metadata"]["usage"]["totalTokens"] > 0


def test_it_reconnected_to_the_chats_stream_url(seen: dict[str, Any]) -> None:
    [post, get] = seen["requests"]
    assert post[:2] == ["POST", "/ai-sdk/slow"] and post[2] == 200
    assert get[0] == "GET" and get[1].endswith("/stream") and get[2] == 200
    assert seen["afterwards"] is None  # over: 204
