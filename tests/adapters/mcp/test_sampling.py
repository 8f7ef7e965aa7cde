"""``model: mcp:sampling``: the agent's model is the MCP client's (``sampling/createMessage``).

Handshake-era connections over a real socket, stateful and stateless (the
request travels on the call's own stream; stateless, the answer is a POST
of its own); the client's sampling handler is the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY

from agenthost.agents import ChatAgent
from agenthost.agents.errors import UserError
from agenthost.agents.models.sampling import SamplingModel
from agenthost.app.build import build_model
from agenthost.app.server import create_app
from agenthost.app.specs import ChatAgentSpec
from tests.adapters.mcp.helpers import mcp_client, mcp_settings, running_app
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def agents() -> dict[str, Any]:
    return {"borrowed": ChatAgent("borrowed", SamplingModel(), instructions="Answer in one word.")}


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    stateful = create_app(mcp_settings(mcp_stateless=False), agents())
    stateless = create_app(mcp_settings(mcp_stateless=True), agents())
    with (
        serve_in_thread(stateful, lifespan=True) as one,
        serve_in_thread(stateless, lifespan=True) as other,
    ):
        yield {"stateful": f"{one}/mcp", "stateless": f"{other}/mcp"}


class ClientModel:
    """The client's LLM: answers "Paris", and records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[types.CreateMessageRequestParams] = []

    async def __call__(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(params)
        text = types.TextContent(type="text", text="Paris")
        return types.CreateMessageResult(role="assistant", content=text, model="client-llm")


@pytest.mark.parametrize("where", ["stateful", "stateless"])
async def test_the_agent_answers_through_the_clients_sampling_handler(
    urls: dict[str, str], where: str
) -> None:
    model = ClientModel()
    async with Client(urls[where], mode="legacy", sampling_callback=model) as client:
        result = await client.call_tool("borrowed", {"message": "Capital of France?"})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["text"] == "Paris"
    (asked,) = model.asked
    assert asked.system_prompt is not None and "Answer in one word." in asked.system_prompt
    assert [m.role for m in asked.messages] == ["user"]
    content = asked.messages[0].content
    assert isinstance(content, types.TextContent) and content.text == "Capital of France?"


@pytest.mark.parametrize("where", ["stateful", "stateless"])
async def test_without_a_client_that_can_lend_its_model_the_call_fails_clearly(
    urls: dict[str, str], where: str
) -> None:
    async with Client(urls[where], mode="legacy") as client:
        result = await client.call_tool("borrowed", {"message": "Capital of France?"})
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent) and "mcp:sampling" in text.text


async def test_outside_mcp_the_model_refuses_with_a_clear_error() -> None:
    with pytest.raises(UserError, match="call it over MCP"):
        await agents()["borrowed"].run("Capital of France?")


def test_the_config_names_it_mcp_sampling() -> None:
    spec = ChatAgentSpec(name="borrowed", model="mcp:sampling")
    assert isinstance(build_model(spec), SamplingModel)


async def test_in_the_2026_era_the_clients_model_answers_by_input_requests() -> None:
    model = ClientModel()
    async with (
        running_app(agents()) as app,
        mcp_client(app, mode="2026-07-28", sampling_callback=model) as client,
    ):
        result = await client.call_tool("borrowed", {"message": "Capital of France?"})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["text"] == "Paris"
    (asked,) = model.asked
    assert asked.system_prompt is not None and "Answer in one word." in asked.system_prompt


async def test_in_the_2026_era_a_client_without_sampling_gets_the_missing_capability() -> None:
    async with running_app(agents()) as app, mcp_client(app, mode="2026-07-28") as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("borrowed", {"message": "Capital of France?"})
    assert refused.value.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_a_tampered_sampling_state_is_invalid_params() -> None:
    async with (
        running_app(agents()) as app,
        mcp_client(app, mode="2026-07-28", sampling_callback=ClientModel()) as client,
    ):
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "borrowed", {"message": "hi"}, request_state="sampling:!!not-base64"
            )
    assert refused.value.error.code == INVALID_PARAMS
