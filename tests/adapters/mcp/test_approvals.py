"""A tool that needs approval over MCP: the client is asked by elicitation (the approval
form); accepted with ``approve: true`` the call runs once, declined it never runs."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitRequestParams, ElicitResult

from agenthost.app.server import create_app
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter
from tests.adapters.mcp.helpers import mcp_client, mcp_settings, running_app
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio


class User:
    """Answers the approval form: accepts with ``approve`` or declines; records what it saw."""

    def __init__(self, approve: bool | None) -> None:
        self.approve = approve
        self.asked: list[tuple[str, Any]] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append((params.message, params.requested_schema))  # type: ignore[union-attr]
        if self.approve is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"approve": self.approve})


@pytest.mark.parametrize(
    ("approve", "answer", "runs"),
    [(True, RAN, 1), (False, WAS_DECLINED, 0), (None, WAS_DECLINED, 0)],
)
async def test_a_2026_client_approves_or_declines_by_elicitation(
    approve: bool | None, answer: str, runs: int
) -> None:
    deleter, user = Deleter(), User(approve)
    async with (
        running_app({"deleter": deleter.agent}) as app,
        mcp_client(app, mode="2026-07-28", elicitation_callback=user) as client,
    ):
        result = await client.call_tool("deleter", {"message": "tidy up", "session_id": "s"})
    [(question, form)] = user.asked
    assert question == QUESTION and list(form["properties"]) == ["approve"]
    assert result.structured_content is not None
    assert result.structured_content["text"] == answer
    assert deleter.deleted == ["/tmp/notes.txt"] * runs


@pytest.mark.slow
@pytest.mark.parametrize(("approve", "answer", "runs"), [(True, RAN, 1), (None, WAS_DECLINED, 0)])
async def test_a_handshake_client_approves_or_declines_by_elicitation(
    approve: bool | None, answer: str, runs: int
) -> None:
    deleter, user = Deleter(), User(approve)
    app = create_app(mcp_settings(), {"deleter": deleter.agent})
    with serve_in_thread(app, lifespan=True) as url:
        async with Client(f"{url}/mcp", mode="legacy", elicitation_callback=user) as client:
            result = await client.call_tool("deleter", {"message": "tidy up"})
    assert [q for q, _ in user.asked] == [QUESTION]
    assert result.structured_content is not None
    assert result.structured_content["text"] == answer
    assert deleter.deleted == ["/tmp/notes.txt"] * runs
