"""The app with MCP mounted, and the official MCP client talking to it in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agenthost.agents import Agent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

URL = "http://localhost/mcp"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
"""A handshake-era ``initialize`` request, for tests that speak raw JSON-RPC."""


def mcp_settings(**overrides: Any) -> Settings:
    """Settings serving /v1 and /mcp."""
    values: dict[str, Any] = {"adapters": ["openai", "mcp"], **overrides}
    return Settings(**values)


@asynccontextmanager
async def running_app(
    agents: Mapping[str, Agent], settings: Settings | None = None, **create: Any
) -> AsyncIterator[FastAPI]:
    app = create_app(settings or mcp_settings(), agents, **create)
    async with LifespanManager(app) as manager:
        yield manager.app  # type: ignore[misc]


def http(app: Any, headers: Mapping[str, str] | None = None) -> httpx2.AsyncClient:
    """An httpx2 client (the MCP SDK's) bound to the app in-process."""
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), headers=dict(headers or {}), timeout=30
    )


@asynccontextmanager
async def mcp_client(
    app: Any, headers: Mapping[str, str] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The MCP SDK's client over streamable HTTP to the in-process app."""
    async with http(app, headers) as client:
        transport = streamable_http_client(URL, http_client=client)
        async with Client(transport, **options) as mcp:
            yield mcp
