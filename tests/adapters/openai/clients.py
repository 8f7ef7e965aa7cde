"""The app in-process for /v1 tests, every answer checked against OpenAI's schemas."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx
import openai
from fastapi import FastAPI

from agenthost.agents import Agent
from agenthost.app.settings import Settings
from tests import conftest
from tests.adapters.openai.openapi import SchemaCheckingTransport


@asynccontextmanager
async def running(
    agents: Mapping[str, Agent], settings: Settings | None = None
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app with its lifespan entered, and a schema-checking httpx client bound to it."""
    async with conftest.running(agents, settings, wrap=SchemaCheckingTransport) as running:
        yield running


@asynccontextmanager
async def openai_client(
    agents: Mapping[str, Agent], settings: Settings | None = None, *, max_retries: int = 2
) -> AsyncIterator[openai.AsyncOpenAI]:
    """The official SDK talking to the app in-process."""
    async with running(agents, settings) as (_, http):
        yield openai.AsyncOpenAI(
            base_url="http://localhost/v1",
            api_key="unused",
            http_client=http,
            max_retries=max_retries,
        )
