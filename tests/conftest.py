"""Shared fixtures: the app in-process with the openai SDK as its client."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import openai
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from agenthost.agents import Agent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.upstream import FakeUpstream, serve_in_thread

# Commands the tests start (agenthost serve, the stdio commands) run with
# ``python -P`` (no working directory on sys.path, so the repository's agents/
# never shadows the OpenAI Agents SDK's `agents`) and import test agents as
# tests.*: a folder holding only a link to tests/ goes on their PYTHONPATH.
_TESTS_ONLY = Path(tempfile.mkdtemp(prefix="agenthost-tests-path-"))
(_TESTS_ONLY / "tests").symlink_to(Path(__file__).resolve().parent)
os.environ["PYTHONPATH"] = os.pathsep.join(
    filter(None, [str(_TESTS_ONLY), os.environ.get("PYTHONPATH")])
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    """The fake OpenAI-compatible upstream on a real socket: (fake, base URL with /v1)."""
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as url:
        yield fake, f"{url}/v1"


@asynccontextmanager
async def running(
    agents: Mapping[str, Agent],
    settings: Settings | None = None,
    *,
    wrap: Callable[[httpx.AsyncBaseTransport], httpx.AsyncBaseTransport] | None = None,
    shutdown_timeout: float = 5,
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app with its lifespan entered, and an httpx client bound to it.

    ``wrap`` puts a transport of the test's around the in-process one (one
    that checks every answer, say). ``shutdown_timeout``: asgi-lifespan's limit
    on the app's shutdown.
    """
    app = create_app(settings or Settings(), agents)
    async with LifespanManager(app, shutdown_timeout=shutdown_timeout) as manager:
        transport: httpx.AsyncBaseTransport = httpx.ASGITransport(app=manager.app)
        if wrap is not None:
            transport = wrap(transport)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield app, client


@asynccontextmanager
async def openai_client(
    agents: Mapping[str, Agent], settings: Settings | None = None, *, api_key: str = "unused"
) -> AsyncIterator[openai.AsyncOpenAI]:
    """The official SDK talking to the app in-process."""
    async with running(agents, settings) as (_, http):
        yield openai.AsyncOpenAI(
            base_url="http://localhost/v1", api_key=api_key, http_client=http, max_retries=2
        )
