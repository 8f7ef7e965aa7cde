"""405s carry every method the path serves in ``Allow``, on every surface (issue 17, point 9)."""

from __future__ import annotations

import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import running

pytestmark = pytest.mark.anyio

RUN = "/acp/runs/00000000-0000-0000-0000-000000000000"


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


@pytest.mark.parametrize(
    ("method", "path", "allow", "error_key"),
    [
        ("PUT", "/v1/conversations/conv_x", "GET, HEAD, POST, DELETE", "error"),
        ("PUT", "/v1/responses/resp_x", "GET, HEAD, DELETE", "error"),
        ("DELETE", "/v1/models", "GET, HEAD", "error"),
        ("PUT", "/healthz", "GET, HEAD", "error"),
        ("PUT", "/a2a/echo", "POST", "error"),
        ("PUT", "/acp/runs", "POST", "code"),
        ("PATCH", RUN, "GET, HEAD, POST", "code"),
        ("PUT", f"{RUN}/cancel", "POST", "code"),
        ("DELETE", "/acp/agents", "GET, HEAD", "code"),
    ],
)
async def test_a_wrong_method_gets_405_with_every_allowed_method(
    method: str, path: str, allow: str, error_key: str
) -> None:
    settings = Settings(adapters=["openai", "a2a", "acp"], playground=False)
    async with running(echo(), settings) as (_, client):
        answer = await client.request(method, path, json={})
    assert answer.status_code == 405, answer.text
    assert answer.headers["allow"] == allow
    assert error_key in answer.json()  # the protocol's own error shape


async def test_an_unknown_acp_path_is_still_404() -> None:
    settings = Settings(adapters=["acp"], playground=False)
    async with running(echo(), settings) as (_, client):
        answer = await client.put("/acp/nothing/here", json={})
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
