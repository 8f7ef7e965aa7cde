"""The app in-process for the Messages API tests, with the official ``anthropic`` SDK.

The SDK brings its own HTTP client (``httpx2``, a fork of httpx): it is bound
to the app through that package's ASGI transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anthropic
import httpx2
from asgi_lifespan import LifespanManager

from agenthost.agents import Agent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings


@asynccontextmanager
async def running(
    agents: Mapping[str, Agent], settings: Settings | None = None
) -> AsyncIterator[httpx2.AsyncClient]:
    """The app with its lifespan entered, and an HTTP client bound to it."""
    app = create_app(settings or Settings(), agents)
    async with LifespanManager(app) as manager:
        transport = httpx2.ASGITransport(app=manager.app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client


def sdk(
    http: httpx2.AsyncClient, *, api_key: str | None = "unused", auth_token: str | None = None
) -> anthropic.AsyncAnthropic:
    """The official SDK on ``http``, as Claude Code and ``ANTHROPIC_BASE_URL`` use it."""
    return anthropic.AsyncAnthropic(
        base_url="http://localhost",
        api_key=api_key,
        auth_token=auth_token,
        http_client=http,
        max_retries=0,
    )


@asynccontextmanager
async def anthropic_client(
    agents: Mapping[str, Agent], settings: Settings | None = None
) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with running(agents, settings) as http:
        yield sdk(http)
