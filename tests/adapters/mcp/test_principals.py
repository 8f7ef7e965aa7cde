"""API keys on /mcp: 401 without one, conversations and tools per principal."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.mcp.helpers import INITIALIZE, URL, http, mcp_client, mcp_settings, running_app
from tests.principals import KEYS, bearer, check_isolation, transcript_model

pytestmark = pytest.mark.anyio


def keyed(**overrides: object) -> object:
    return mcp_settings(api_keys=[f"{n}:{k}" for n, k in KEYS.items()], **overrides)


class SessionProbe:
    """A conversation named by the ``session_id`` tool argument.

    Reading it = continuing it and looking at what the model was shown; MCP
    has no way to list or delete a conversation.
    """

    def __init__(self, clients: dict[str, Client]) -> None:
        self.clients = clients

    async def create(self, principal: str, text: str) -> str:
        await self.resume(principal, "support", text)
        return "support"

    async def read(self, principal: str, ref: str) -> str | None:
        shown = await self.resume(principal, ref, "read back")
        return shown if shown != "read back" else None

    async def resume(self, principal: str, ref: str, text: str) -> str:
        result = await self.clients[principal].call_tool("t", {"message": text, "session_id": ref})
        assert not result.is_error and result.structured_content is not None
        return str(result.structured_content["text"])

    async def delete(self, principal: str, ref: str) -> bool:
        return False

    async def list(self, principal: str) -> list[str]:
        return []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_session_id_belongs_to_the_key_that_used_it(mode: str) -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with (
        running_app(agents, keyed()) as app,  # type: ignore[arg-type]
        mcp_client(app, bearer("alice"), mode=mode) as alice,
        mcp_client(app, bearer("bob"), mode=mode) as bob,
        mcp_client(app, bearer("t1/alice"), mode=mode) as t1_alice,
        mcp_client(app, bearer("t2/alice"), mode=mode) as t2_alice,
    ):
        clients = {"alice": alice, "bob": bob, "t1/alice": t1_alice, "t2/alice": t2_alice}
        await check_isolation(SessionProbe(clients))


async def test_without_a_key_mcp_answers_401_with_a_bearer_challenge() -> None:
    agents = {"t": ChatAgent("t", EchoModel())}
    async with running_app(agents, keyed()) as app, http(app) as client:  # type: ignore[arg-type]
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"accept": "application/json, text/event-stream"}
        for extra in ({}, {"authorization": "Bearer wrong"}):
            answer = await client.post(URL, json=body, headers={**headers, **extra})
            assert answer.status_code == 401
            assert answer.headers["www-authenticate"] == "Bearer"
            error = answer.json()
            assert error["jsonrpc"] == "2.0" and error["id"] is None
            assert error["error"]["message"] == "missing or invalid API key"
        # The SDK's client reports the refusal with its message, not a hang.
        refusal = pytest.RaisesExc(MCPError, match="missing or invalid API key")
        with pytest.RaisesGroup(refusal, flatten_subgroups=True):
            async with mcp_client(app, mode="legacy"):
                pass
        async with mcp_client(app, bearer("bob")) as served:
            assert (await served.call_tool("t", {"message": "hi"})).structured_content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_agent_limited_to_a_principal_is_an_unknown_tool_to_others(mode: str) -> None:
    agents = {"t": ChatAgent("t", EchoModel()), "private": ChatAgent("private", EchoModel())}
    allow = {"private": frozenset({"alice"})}
    async with running_app(agents, keyed(), allow=allow) as app:  # type: ignore[arg-type]
        async with mcp_client(app, bearer("bob"), mode=mode) as bob:
            assert [t.name for t in (await bob.list_tools()).tools] == ["t"]
            assert [str(r.uri) for r in (await bob.list_resources()).resources] == ["agent://t"]
            assert [p.name for p in (await bob.list_prompts()).prompts] == ["t"]
            with pytest.raises(MCPError) as raised:
                await bob.session.call_tool("private", {"message": "hi"})
            assert raised.value.error.code == INVALID_PARAMS
            assert raised.value.error.message == "Unknown tool: private"
            with pytest.raises(MCPError, match="Resource not found"):
                await bob.read_resource("agent://private")
        async with mcp_client(app, bearer("alice"), mode=mode) as alice:
            assert [t.name for t in (await alice.list_tools()).tools] == ["t", "private"]
            result = await alice.call_tool("private", {"message": "hi"})
            assert result.structured_content is not None
            assert result.structured_content["text"] == "hi"


async def test_a_stateful_mcp_session_cannot_be_used_with_another_key() -> None:
    agents = {"t": ChatAgent("t", EchoModel())}
    settings = keyed(mcp_stateless=False)
    async with running_app(agents, settings) as app, http(app) as client:  # type: ignore[arg-type]
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        opened = await client.post(URL, json=INITIALIZE, headers={**headers, **bearer("alice")})
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        stolen = {**headers, **bearer("bob"), "mcp-session-id": session}
        assert (await client.post(URL, json=ping, headers=stolen)).status_code == 404
        own = {**headers, **bearer("alice"), "mcp-session-id": session}
        assert (await client.post(URL, json=ping, headers=own)).status_code == 200
