"""``agenthost serve`` with MCP on: the real command, a real socket, the SDK's client."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
from mcp import Client

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_settings
from tests.commands import serving

pytestmark = pytest.mark.anyio

CONFIG = "agents:\n  - {name: echo, description: Repeats what you say., model: echo}\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = tmp_path_factory.mktemp("serve") / "agents.yaml"
    config.write_text(CONFIG)
    env = {**os.environ, "AGENTHOST_ADAPTERS": "openai,mcp", "AGENTHOST_ACCESS_LOG": "false"}
    with serving(config, env) as (_, url):
        yield url


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_agenthost_serve_answers_mcp_clients_and_openai_ones(served: str, mode: str) -> None:
    async with Client(f"{served}/mcp", mode=mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
        result = await client.call_tool("echo", {"message": "over the wire"})
        assert result.structured_content is not None
        assert result.structured_content["text"] == "over the wire"
    async with httpx.AsyncClient(base_url=served) as http:
        models = await http.get("/v1/models")
        assert [m["id"] for m in models.json()["data"]] == ["echo"]
        # No redirect for the bare path: clients POST to /mcp itself.
        ping = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
        assert ping.status_code == 200


async def test_readyz_is_503_until_the_mcp_session_manager_runs() -> None:
    from asgi_lifespan import LifespanManager

    app = create_app(mcp_settings(), {"echo": ChatAgent("echo", EchoModel())})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        assert (await client.get("/readyz")).status_code == 503
        async with LifespanManager(app):
            assert (await client.get("/readyz")).status_code == 200
            ping = await client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"accept": "application/json, text/event-stream"},
            )
            assert ping.status_code == 200
        assert (await client.get("/readyz")).status_code == 503
