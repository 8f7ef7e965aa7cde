"""The acp-sdk client bound to the app: in-process, or over a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx
from acp_sdk.client import Client
from asgi_lifespan import LifespanManager

from agenthost.agents import Agent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings


def acp_settings(**overrides: object) -> Settings:
    return Settings(adapters=["openai", "acp"], **overrides)  # type: ignore[arg-type]


@asynccontextmanager
async def acp_client(
    agents: Mapping[str, Agent],
    settings: Settings | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Client]:
    """acp-sdk's ``Client`` talking to the app in-process at ``/acp``."""
    app = create_app(settings or acp_settings(), agents)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with Client(
            transport=transport, base_url="http://localhost/acp", headers=dict(headers or {})
        ) as client:
            yield client
