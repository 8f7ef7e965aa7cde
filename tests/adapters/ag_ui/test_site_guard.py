"""The browser-facing streams keep the server's origin policy: a foreign Origin gets 403,
a non-JSON body 415, a foreign Host 421, each in the surface's JSON error shape; a
configured front-end origin passes (with its CORS headers)."""

from __future__ import annotations

import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.conftest import running

pytestmark = pytest.mark.anyio

AGENTS = {"echo": ChatAgent("echo", EchoModel())}
POSTS = {
    "/ag-ui/echo": {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    },
    "/ai-sdk/echo": {
        "id": "c",
        "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    },
}


@pytest.mark.parametrize("path", list(POSTS))
async def test_cross_site_posts_and_foreign_hosts_are_refused(path: str) -> None:
    body = POSTS[path]
    settings = Settings(adapters=["ag_ui", "ai_sdk"], cors_origins=["https://chat.example"])  # type: ignore[arg-type]
    async with running(AGENTS, settings) as (_, http):
        evil = await http.post(path, json=body, headers={"origin": "https://evil.example"})
        text = await http.post(path, content=b"{}", headers={"content-type": "text/plain"})
        rebound = await http.post(path, json=body, headers={"host": "evil.example"})
        front_end = await http.post(path, json=body, headers={"origin": "https://chat.example"})
    assert evil.status_code == 403 and "Origin" in evil.json()["error"]["message"]
    assert text.status_code == 415 and text.json()["error"]["code"]
    assert rebound.status_code == 421 and rebound.json()["error"]["message"]
    assert front_end.status_code == 200
    assert front_end.headers["access-control-allow-origin"] == "https://chat.example"
    assert front_end.headers["content-type"].startswith("text/event-stream")
