"""Streams and cancellation over a real socket: a cancelled run really stops.

uvicorn in a thread (``httpx.ASGITransport`` buffers whole responses), the
acp-sdk client, and either the fake upstream (which counts the streams its
client closed early) or a tool that sleeps for a minute.
"""

import asyncio
import threading
from collections.abc import Iterator

import pytest
from acp_sdk.client import Client
from acp_sdk.models import MessagePartEvent, RunCreatedEvent, RunStatus

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from tests.adapters.acp.clients import acp_settings
from tests.slow import SlowTool
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def slow_tool() -> Iterator[tuple[SlowTool, str]]:
    slow = SlowTool()
    app = create_app(acp_settings(), {"slow": slow.agent})
    with serve_in_thread(app, lifespan=True) as url:
        yield slow, f"{url}/acp"


async def _wait_for(condition: threading.Event) -> bool:
    for _ in range(200):
        if condition.is_set():
            return True
        await asyncio.sleep(0.025)
    return False


async def test_a_stream_sends_parts_as_they_come_and_cancel_closes_the_upstream(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, upstream_url = upstream
    before = fake.abandoned
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0))
    app = create_app(acp_settings(), {"relay": agent})
    with serve_in_thread(app, lifespan=True) as url:
        async with Client(base_url=f"{url}/acp", timeout=10) as client:
            types, parts = [], 0
            async for event in client.run_stream("go", agent="relay"):
                types.append(event.type)
                if isinstance(event, RunCreatedEvent):
                    run_id = event.run.run_id
                if isinstance(event, MessagePartEvent):
                    parts += 1
                    if parts == 3:  # the upstream is still streaming its 200 words
                        cancelling = await client.run_cancel(run_id=run_id)
                        assert cancelling.status == RunStatus.CANCELLING
            assert types[:3] == ["run.created", "run.in-progress", "message.created"]
            assert types[-1] == "run.cancelled" and parts >= 3
            run = await client.run_status(run_id=run_id)
            assert run.status == RunStatus.CANCELLED and str(run.output[0]).startswith("word")
        for _ in range(100):
            if fake.abandoned > before:
                break
            await asyncio.sleep(0.05)
        assert fake.abandoned == before + 1, "the upstream stream was not closed"


async def test_cancelling_an_async_run_stops_its_tool(slow_tool: tuple[SlowTool, str]) -> None:
    slow, url = slow_tool
    async with Client(base_url=url, timeout=10) as client:
        run = await client.run_async("go", agent="slow")
        assert await _wait_for(slow.started)
        cancelling = await client.run_cancel(run_id=run.run_id)
        assert cancelling.status == RunStatus.CANCELLING
        assert await _wait_for(slow.cancelled), "the tool kept running after the cancel"
        for _ in range(100):
            run = await client.run_status(run_id=run.run_id)
            if run.status.is_terminal:
                break
            await asyncio.sleep(0.02)
        assert run.status == RunStatus.CANCELLED and run.finished_at is not None
        events = [e.type async for e in client.run_events(run_id=run.run_id)]
        assert events[-1] == "run.cancelled"


async def test_a_stream_client_that_leaves_cancels_its_run(
    slow_tool: tuple[SlowTool, str],
) -> None:
    slow, url = slow_tool
    async with Client(base_url=url, timeout=10) as client:
        async for event in client.run_stream("go", agent="slow"):
            if isinstance(event, RunCreatedEvent):
                run_id = event.run.run_id
            if event.type == "message.part":  # the tool has started
                break
        assert await _wait_for(slow.cancelled), "the tool kept running after the client left"
        for _ in range(100):
            run = await client.run_status(run_id=run_id)
            if run.status.is_terminal:
                break
            await asyncio.sleep(0.02)
        assert run.status == RunStatus.CANCELLED


async def test_a_sync_client_that_gives_up_cancels_its_run(
    slow_tool: tuple[SlowTool, str],
) -> None:
    import httpx

    slow, url = slow_tool
    async with Client(base_url=url, timeout=1) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.run_sync("go", agent="slow")
    assert await _wait_for(slow.cancelled), "the tool kept running after the client left"
