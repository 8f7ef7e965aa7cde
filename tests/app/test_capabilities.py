"""What an adapter may also do is declared (runtime-checkable protocols), not probed."""

from __future__ import annotations

from agenthost.adapters.base import HasAsgiRoutes, HasBoundedStores, HasStoreHealth
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings


def test_each_adapter_declares_its_optional_capabilities() -> None:
    settings = Settings(adapters=["openai", "a2a", "mcp", "acp"], playground=False)
    app = create_app(settings, {"echo": ChatAgent("echo", EchoModel())})
    declared = {
        adapter.name: [
            capability.__name__
            for capability in (HasAsgiRoutes, HasStoreHealth, HasBoundedStores)
            if isinstance(adapter, capability)
        ]
        for adapter in app.state.adapters.values()
    }
    assert declared == {
        "openai": ["HasAsgiRoutes"],
        "a2a": ["HasAsgiRoutes", "HasStoreHealth", "HasBoundedStores"],
        "mcp": [],
        "acp": ["HasBoundedStores"],
    }
