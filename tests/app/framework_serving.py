"""``agenthost serve`` of framework agents on the test upstream, and the checks every
framework's served test makes: Chat Completions streamed (a tool call shown),
A2A two turns in one context, MCP, and a cancel that closes the upstream stream."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import openai

from tests import commands
from tests.commands import clean_env
from tests.upstream import FakeUpstream


@contextmanager
def serving(config: Path, upstream: str, adapters: str = "openai,a2a,mcp") -> Iterator[str]:
    """``agenthost serve`` of ``config``, its models on ``upstream``; yields its URL."""
    env = clean_env(
        AGENTHOST_ADAPTERS=adapters,
        AGENTHOST_ACCESS_LOG="false",
        OPENAI_BASE_URL=upstream,
        OPENAI_API_KEY="test-key-for-the-fake",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_LOG="ERROR",
        CREWAI_DISABLE_TELEMETRY="true",
        OTEL_SDK_DISABLED="true",
        OPENAI_AGENTS_DISABLE_TRACING="1",
    )
    with commands.serving(config, env, timeout=300) as (_, url):  # framework imports are slow
        yield url


def chat(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", timeout=120)


async def streamed_chat(url: str, model: str, prompt: str) -> tuple[str, int]:
    """The text of a streamed chat completion, and how many chunks carried it."""
    async with chat(url) as client:
        messages = [{"role": "user", "content": prompt}]
        stream = await client.chat.completions.create(model=model, messages=messages, stream=True)
        texts = [c.choices[0].delta.content async for c in stream if c.choices]
    said = [t for t in texts if t]
    return "".join(said), len(said)


async def cancel_mid_stream(url: str, agent: str, fake: FakeUpstream) -> None:
    """Leave a streamed chat completion once the model streams; the upstream stream closes.

    The client leaves whether or not the answer has begun: an agent that gives
    its answer whole sends nothing (not even the headers) before it ends.
    """
    before, started = fake.abandoned, fake.slow_started
    body = {"model": agent, "messages": [{"role": "user", "content": "go on"}], "stream": True}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:

        async def read() -> None:
            async with http.stream("POST", "/v1/chat/completions", json=body) as response:
                async for _ in response.aiter_bytes():
                    pass

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            with anyio.fail_after(60):
                while fake.slow_started == started:  # noqa: ASYNC110 (set in the fake's thread)
                    await anyio.sleep(0.02)
            tasks.cancel_scope.cancel()  # the client leaves
    # The server's run must close the model's stream.
    with anyio.fail_after(60):
        while fake.abandoned == before:  # noqa: ASYNC110 (set in the fake's thread)
            await anyio.sleep(0.05)
