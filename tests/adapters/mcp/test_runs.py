"""Long runs over MCP: partial output as progress, and cancellation that stops the run.

Cancellation runs over a real socket (uvicorn in a thread) against the fake
OpenAI upstream, which counts the streams its client left before the end.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from mcp import Client

from agenthost.agents import ChatAgent
from agenthost.agents.messages import Message
from agenthost.agents.models import BaseChatModel, ModelRequest
from agenthost.agents.models.base import ModelStreamEvent
from agenthost.agents.models.echo import stream_words
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import INITIALIZE, mcp_client, mcp_settings, running_app
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

WORDS = " ".join(f"w{i}" for i in range(40))


class SlowWords(BaseChatModel):
    """Streams a fixed answer one word every ``pause`` seconds."""

    name = "slow-words"

    def __init__(self, pause: float) -> None:
        self.pause = pause

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        async for event in stream_words(request, Message.assistant(WORDS)):
            yield event
            await anyio.sleep(self.pause)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_partial_output_arrives_as_throttled_progress_before_the_result(mode: str) -> None:
    agents = {"slow": ChatAgent("slow", SlowWords(0.01))}
    received: list[tuple[float, str | None, float]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, message, time.monotonic()))

    # A real socket: the in-process transport delivers a response's events all at once.
    app = create_app(mcp_settings(mcp_progress_interval=0.05), agents)
    with serve_in_thread(app, lifespan=True) as url:
        async with Client(f"{url}/mcp", mode=mode) as client:
            result = await client.call_tool(
                "slow", {"message": "go"}, progress_callback=on_progress
            )
            finished = time.monotonic()
    assert result.structured_content is not None and result.structured_content["text"] == WORDS
    # Every piece of text, in order, and nothing else.
    assert "".join(message or "" for _, message, _ in received) == WORDS
    # Throttled: 40 words over ~0.4 s at most one per 50 ms (plus the last one).
    assert 3 <= len(received) <= 12, len(received)
    # On average (a busy machine delays single notifications), 50 ms apart.
    times = [at for _, _, at in received[:-1]]
    assert (times[-1] - times[0]) / (len(times) - 1) >= 0.04, times
    progress = [p for p, _, _ in received]
    assert progress == sorted(set(progress)), "progress must grow with every notification"
    assert received[0][2] < finished - 0.1, "partial output must arrive while the run goes on"


async def test_without_a_progress_token_the_run_is_not_streamed() -> None:
    agents = {"slow": ChatAgent("slow", SlowWords(0.0))}
    async with running_app(agents) as app, mcp_client(app) as client:
        result = await client.call_tool("slow", {"message": "go"})
    assert result.structured_content is not None and result.structured_content["text"] == WORDS


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "stateless"),
    [("legacy", False), ("legacy", True), ("2026-07-28", True)],
)
async def test_a_cancelled_call_closes_the_upstream_stream(
    upstream: tuple[FakeUpstream, str], mode: str, stateless: bool
) -> None:
    fake, upstream_url = upstream
    before = fake.abandoned
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0))
    app = create_app(mcp_settings(mcp_stateless=stateless), {"relay": agent})
    first_progress = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        first_progress.set()

    with serve_in_thread(app, lifespan=True) as url:
        async with Client(f"{url}/mcp", mode=mode) as client:
            with anyio.move_on_after(0.1):
                await client.list_tools()  # warm up
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool(
                        "relay", {"message": "go"}, progress_callback=on_progress
                    )

                group.start_soon(call)
                with anyio.fail_after(5):
                    await first_progress.wait()
                group.cancel_scope.cancel()
            # The client is still usable, and the server still serves.
            assert (await client.list_tools()).tools[0].name == "relay"
        for _ in range(100):  # the upstream runs in another thread: poll it for 5 s
            if fake.abandoned > before:
                break
            await anyio.sleep(0.05)
    assert fake.abandoned == before + 1, "the upstream stream outlived the cancelled call"


@pytest.mark.slow
async def test_notifications_cancelled_alone_stops_the_run(
    upstream: tuple[FakeUpstream, str],
) -> None:
    """Raw JSON-RPC: the call's stream stays open; only the notification cancels."""
    fake, upstream_url = upstream
    before = fake.abandoned
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0))
    app = create_app(mcp_settings(mcp_stateless=False), {"relay": agent})
    headers = {"accept": "application/json, text/event-stream"}
    with serve_in_thread(app, lifespan=True) as url:
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=10) as client:
            opened = await client.post("/mcp", json=INITIALIZE)
            headers = {"mcp-session-id": opened.headers["mcp-session-id"]}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await client.post("/mcp", json=initialized, headers=headers)
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {
                    "name": "relay",
                    "arguments": {"message": "go"},
                    "_meta": {"progressToken": "p"},
                },
            }
            async with client.stream("POST", "/mcp", json=call, headers=headers) as stream:
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("data:") and "notifications/progress" in line:
                        break
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "user pressed stop"},
                }
                assert (await client.post("/mcp", json=cancel, headers=headers)).status_code == 202
                for _ in range(100):  # the upstream runs in another thread: poll it for 5 s
                    if fake.abandoned > before:
                        break
                    await anyio.sleep(0.05)
                assert fake.abandoned == before + 1, "the run went on after notifications/cancelled"
