"""What the served framework tests check with each kind of client: the OpenAI SDK
(streamed chat deltas), the A2A SDK (a tool call shown as it happens, two turns
in one context) and the MCP SDK; and what the fake upstream was sent.

Kept apart from :mod:`tests.app.framework_serving` so that a framework whose
environment cannot hold the MCP SDK 2 (CrewAI) can still import the server.
"""

from __future__ import annotations

import os

import openai
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from mcp import Client

from tests.upstream import FakeUpstream


async def chat_deltas(url: str, agent: str, text: str) -> list[str]:
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


def texts_sent(fake: FakeUpstream) -> list[str]:
    """The text of each message of the model's last request (content as text or parts)."""
    texts = []
    for message in fake.requests[-1]["messages"]:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        texts.append(str(content))
    return texts
