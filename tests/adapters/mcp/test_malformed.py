import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.mcp.helpers import INITIALIZE, mcp_settings
from tests.conftest import running

pytestmark = pytest.mark.anyio

HEADERS = {"accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ([PING], 400, -32600),
        ({**PING, "id": {"a": 1}}, 400, -32600),
        ({**PING, "id": True}, 400, -32600),
        (INITIALIZE, 200, None),
    ],
    ids=["batch", "object id", "boolean id", "valid"],
)
async def test_batches_and_bad_ids_are_invalid_requests(
    body: object, status: int, code: int | None
) -> None:
    agents = {"echo": ChatAgent("echo", EchoModel(), description="Repeats.")}
    async with running(agents, mcp_settings()) as (_, http):
        answer = await http.post("/mcp", json=body, headers=HEADERS)
        assert answer.status_code == status, answer.text
        if code is not None:
            assert answer.json()["error"]["code"] == code
        wrong_type = await http.post(
            "/mcp", content=b"{}", headers={**HEADERS, "content-type": "text/plain"}
        )
        assert wrong_type.status_code == 415
        assert wrong_type.headers["content-type"].startswith("application/json")
