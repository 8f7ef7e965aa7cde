"""One origin policy for every surface, with auth on and off: a foreign
Origin gets 403, a non-JSON body 415, a foreign Host 421, each in the
surface's own error shape; loopback and the server's own origin pass."""

from __future__ import annotations

from typing import Any

import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.conftest import running
from tests.principals import KEYS

pytestmark = pytest.mark.anyio

AGENTS = {"echo": ChatAgent("echo", EchoModel(), description="Repeats.")}
EVERY = ["openai", "a2a", "mcp", "acp"]
A2A_MESSAGE = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
POSTS: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {"model": "echo", "messages": [{"role": "user", "content": "hi"}]},
    "/a2a/echo": {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": A2A_MESSAGE},
    "/acp/runs": {"agent_name": "echo", "input": [{"parts": [{"content": "hi"}]}]},
    "/mcp": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "A2A-Version": "1.0"}


def settings(auth: bool, **overrides: Any) -> Settings:
    keys = [f"{n}:{k}" for n, k in KEYS.items()] if auth else []
    return Settings(adapters=EVERY, api_keys=keys, **overrides)


@pytest.mark.parametrize("auth", [False, True], ids=["auth off", "auth on"])
@pytest.mark.parametrize("path", list(POSTS))
async def test_cross_site_posts_and_foreign_hosts_are_refused_on_every_surface(
    path: str, auth: bool
) -> None:
    key = {"authorization": f"Bearer {KEYS['alice']}"} if auth else {}
    body = POSTS[path]
    async with running(AGENTS, settings(auth)) as (_, http):
        plain = {**HEADERS, **key, "content-type": "text/plain", "origin": "https://evil.example"}
        cross_site = await http.post(path, json=body, headers=plain)
        assert cross_site.status_code == 403, cross_site.text
        assert "Origin" in cross_site.text
        text = await http.post(
            path, json=body, headers={**HEADERS, **key, "content-type": "text/plain"}
        )
        assert text.status_code == 415, text.text
        rebound = await http.post(
            path, json=body, headers={**HEADERS, **key, "host": "evil.example"}
        )
        assert rebound.status_code == 421, rebound.text
        for answer in (cross_site, text, rebound):
            assert answer.headers["content-type"].startswith("application/json"), answer.text
        local = {**HEADERS, **key, "origin": "http://localhost:5173"}
        allowed = await http.post(path, json=body, headers=local)
        assert allowed.status_code < 300, allowed.text
        same_site = {**HEADERS, **key, "origin": "http://localhost"}
        assert (await http.post(path, json=body, headers=same_site)).status_code < 300


async def test_configured_hosts_and_origins_are_allowed_and_probes_answer_any_host() -> None:
    configured = settings(
        False,
        allowed_hosts=["agents.example"],
        cors_origins=["https://chat.example"],
        a2a_public_url="https://public.example/",
    )
    body = POSTS["/v1/chat/completions"]
    async with running(AGENTS, configured) as (_, http):
        for host in ("agents.example", "agents.example:8443", "public.example"):
            answer = await http.post("/v1/chat/completions", json=body, headers={"host": host})
            assert answer.status_code == 200, (host, answer.text)
        chat = {"origin": "https://chat.example"}
        assert (await http.post("/v1/chat/completions", json=body, headers=chat)).status_code == 200
        probe = await http.get("/healthz", headers={"host": "10.1.2.3:8000"})
        assert probe.status_code == 200
        assert (await http.get("/v1/models", headers={"host": "evil.example"})).status_code == 421


async def test_a_server_bound_beyond_loopback_checks_hosts_only_when_told() -> None:
    body = POSTS["/v1/chat/completions"]
    async with running(AGENTS, settings(False, host="0.0.0.0")) as (_, http):
        answer = await http.post("/v1/chat/completions", json=body, headers={"host": "svc:8000"})
        assert answer.status_code == 200
        evil = {"origin": "https://evil.example"}
        assert (await http.post("/v1/chat/completions", json=body, headers=evil)).status_code == 403
