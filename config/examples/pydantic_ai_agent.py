"""The agents of pydantic-ai.yaml: one from pydantic-ai, one plain async generator."""

import os
from collections.abc import AsyncIterator

from pydantic_ai import Agent

from agenthost.agents import Message

agent = Agent(
    os.environ.get("PYDANTIC_AI_MODEL", "test"),
    instructions="You are a helpful assistant. Answer briefly.",
)


async def stream_words(messages: list[Message]) -> AsyncIterator[str]:
    """Stream the last message back, word by word."""
    for word in messages[-1].text.split():
        yield word + " "
