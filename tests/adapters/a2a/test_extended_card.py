"""The extended agent card: with auth on, an authenticated caller also learns the agent's tools."""

from __future__ import annotations

import pytest
from a2a.types import AgentCard, GetExtendedAgentCardRequest

from agenthost.adapters.a2a.cards import extend_card
from agenthost.agents import ChatAgent, ModelSettings, tool
from agenthost.agents.models.local import LocalModel
from tests.adapters.a2a.support import V1, a2a_settings, in_process, rpc, sdk_client
from tests.principals import KEYS, bearer, keyed_settings, transcript_model
from tests.upstream import free_port

pytestmark = pytest.mark.anyio


@tool
def lookup_order(number: str) -> str:
    """Find an order by its number."""
    return f"order {number}"


AGENTS = {"shop": ChatAgent("shop", transcript_model(), tools=(lookup_order,))}
URL = "http://localhost/a2a/shop"


async def test_with_keys_an_authenticated_caller_gets_the_tools_the_public_card_hides() -> None:
    port = free_port()
    settings = keyed_settings(
        adapters=["a2a"], a2a_grpc_port=port, a2a_grpc_public_host=f"127.0.0.1:{port}"
    )
    async with in_process(AGENTS, settings) as http:
        public = (await http.get("/a2a/shop/.well-known/agent-card.json")).json()
        assert public["capabilities"]["extendedAgentCard"] is True
        assert [s["id"] for s in public["skills"]] == ["shop"]
        assert "lookup_order" not in str(public)
        # The a2a-sdk client over JSON-RPC, with alice's key.
        client = await sdk_client(URL, "JSONRPC", http=http, streaming=False, key=KEYS["alice"])
        async with client:
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        skills = {skill.id: skill for skill in card.skills}
        assert set(skills) == {"shop", "tool:lookup_order"}
        assert skills["tool:lookup_order"].description == "Find an order by its number."
        assert card.supported_interfaces[0].url == URL  # the caller's URLs, not a placeholder
        # HTTP+JSON: GET .../extendedAgentCard needs a key too.
        rest = await http.get("/a2a/shop/extendedAgentCard", headers={**V1, **bearer("bob")})
        assert rest.status_code == 200, rest.text
        assert "tool:lookup_order" in [s["id"] for s in rest.json()["skills"]]
        anonymous = await http.get("/a2a/shop/extendedAgentCard", headers=V1)
        assert anonymous.status_code == 401
        # gRPC, with a tenant's key.
        grpc_client = await sdk_client(
            URL, "GRPC", http=http, streaming=False, key=KEYS["t1/alice"]
        )
        async with grpc_client:
            card = await grpc_client.get_extended_agent_card(GetExtendedAgentCardRequest())
        assert "tool:lookup_order" in [skill.id for skill in card.skills]


async def test_without_auth_no_extended_card_is_advertised_or_served() -> None:
    async with in_process(AGENTS, a2a_settings(adapters=["a2a"], a2a_grpc_port=0)) as http:
        public = (await http.get("/a2a/shop/.well-known/agent-card.json")).json()
        assert not public["capabilities"].get("extendedAgentCard")
        answer = await http.post("/a2a/shop", json=rpc("GetExtendedAgentCard", {}), headers=V1)
        assert answer.json()["error"]["message"] == (
            "The agent does not support authenticated extended cards"
        )
        # The SDK client, told by the card there is none, keeps the public card.
        client = await sdk_client(URL, "JSONRPC", http=http, streaming=False)
        async with client:
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        assert [skill.id for skill in card.skills] == ["shop"]


def test_the_extended_card_lists_only_tools_the_agents_model_can_call() -> None:
    # The embedded model calls only the tools its tool_choice forces.
    def local(tool_choice: str | None) -> ChatAgent:
        settings = ModelSettings(tool_choice=tool_choice)
        return ChatAgent("a", LocalModel("smollm2"), tools=(lookup_order,), model_settings=settings)

    def tool_skills(agent: ChatAgent) -> list[str]:
        return [s.id for s in extend_card(AgentCard(), agent).skills]

    assert tool_skills(local(None)) == []
    assert tool_skills(local("lookup_order")) == ["tool:lookup_order"]
    assert tool_skills(AGENTS["shop"]) == ["tool:lookup_order"]
