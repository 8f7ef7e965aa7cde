import httpx
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.mcp.helpers import INITIALIZE, mcp_settings
from tests.conftest import running

pytestmark = pytest.mark.anyio


async def test_stateful_sessions_are_capped_in_count() -> None:
    settings = mcp_settings(mcp_stateless=False, mcp_max_sessions=3)
    agents = {"echo": ChatAgent("echo", EchoModel(), description="Repeats.")}
    headers = {"accept": "application/json, text/event-stream"}
    async with running(agents, settings) as (_, http):
        opened: list[httpx.Response] = []
        for _ in range(5):
            opened.append(await http.post("/mcp", json=INITIALIZE, headers=headers))
        assert [r.status_code for r in opened] == [200, 200, 200, 503, 503]
        session = {**headers, "mcp-session-id": opened[0].headers["mcp-session-id"]}
        assert (await http.delete("/mcp", headers=session)).status_code == 200
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 200
