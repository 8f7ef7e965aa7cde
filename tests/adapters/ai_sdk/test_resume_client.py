"""``useChat({resume: true})`` with the `ai` package's ``Chat`` and ``DefaultChatTransport``
(tests/clients/ai_sdk/resume.mjs) against /ai-sdk with resume on: a stream that drops
mid-message is picked up again and the whole message is rebuilt."""

from __future__ import annotations

from typing import Any

import pytest

from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.ai_sdk.test_resume import GATE, RELEASE, SLOW
from tests.adapters.ai_sdk.use_chat import ROOT, require_client, run_script, texts
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "tests" / "clients" / "ai_sdk" / "resume.mjs"


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    require_client()
    GATE.reset()
    settings = Settings(adapters=["ai_sdk"], playground=False, ai_sdk_resume=True)  # type: ignore[call-arg]
    app = create_app(settings, {"slow": SLOW, "release": RELEASE})  # type: ignore[arg-type]
    with serve_in_thread(app, lifespan=True) as url:
        try:
            return run_script(SCRIPT, {"AI_SDK_URL": f"{url}/ai-sdk"})
        finally:
            GATE.opened.set()


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
