"""``agenthost serve`` of another framework's agents, checked over every kind of client.

A test module per framework starts one server (:func:`serving`) whose agents
(``tests/app/framework_agents.py``) reach the fake upstream the module runs,
then calls the checks below: the OpenAI SDK (streamed chat), the A2A SDK
(a tool call shown as it happens, two turns in one context) and the MCP SDK.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import openai
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from mcp import Client

from tests.commands import serve_command
from tests.upstream import FakeUpstream, free_port


@contextmanager
def serving(config: Path, upstream: str) -> Iterator[str]:
    """``agenthost serve`` of ``config`` with its models on ``upstream``; its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTHOST_")}
    env.update(
        AGENTHOST_ADAPTERS="openai,a2a,mcp",
        AGENTHOST_ACCESS_LOG="false",
        OPENAI_BASE_URL=upstream,
        OPENAI_API_KEY="test-key-of-the-fake",
        OPENAI_AGENTS_DISABLE_TRACING="1",
    )
    url = f"http://127.0.0.1:{port}"
    argv = serve_command(config, port)
    with subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True) as process:
        try:
            deadline = time.monotonic() + 300  # the frameworks import slowly on a loaded machine
            while True:
                try:
                    if httpx.get(f"{url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "agenthost serve did not get ready"
                time.sleep(0.1)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


async def streamed_chat(url: str, agent: str, text: str) -> list[str]:
    """The text deltas of a streamed chat completion."""
    async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        chunks = await client.chat.completions.create(
            model=agent, messages=[{"role": "user", "content": text}], stream=True
        )
        return [c.choices[0].delta.content or "" async for c in chunks if c.choices]


def _message(text: str, context_id: str = "") -> SendMessageRequest:
    parts = [Part(text=text)]
    message = Message(message_id=os.urandom(8).hex(), role=Role.ROLE_USER, parts=parts)
    if context_id:
        message.context_id = context_id
    return SendMessageRequest(message=message)


async def a2a_turn(url: str, agent: str, text: str, context_id: str = "") -> list[StreamResponse]:
    """The streamed events of one A2A message."""
    client = await create_client(f"{url}/a2a/{agent}", ClientConfig(streaming=True))
    try:
        return [event async for event in client.send_message(_message(text, context_id))]
    finally:
        await client.close()


def notes_of(events: list[StreamResponse]) -> list[str]:
    """The working notes (tool calls) among A2A events."""
    return [
        e.status_update.status.message.parts[0].text
        for e in events
        if e.HasField("status_update") and e.status_update.status.message.parts
    ]


def answer_of(events: list[StreamResponse]) -> tuple[str, str]:
    """The answer (its artifact's text) and the context id of an A2A exchange."""
    text, context = "", ""
    for event in events:
        if event.HasField("artifact_update"):
            text += "".join(p.text for p in event.artifact_update.artifact.parts)
            context = event.artifact_update.context_id
    return text, context


async def mcp_call(url: str, agent: str, text: str) -> str:
    """The agent's answer as an MCP tool's structured result."""
    async with Client(f"{url}/mcp") as client:
        result = await client.call_tool(agent, {"message": text, "session_id": "mcp-s1"})
    assert result.structured_content is not None
    return str(result.structured_content["text"])


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


def texts_sent(fake: FakeUpstream) -> list[str]:
    """The text of each message of the model's last request (content as text or parts)."""
    texts = []
    for message in fake.requests[-1]["messages"]:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        texts.append(str(content))
    return texts
