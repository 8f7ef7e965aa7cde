"""Ask an agent over Chat Completions, streamed or not, with the openai SDK."""

from typing import Any

import openai


async def complete(
    client: openai.AsyncOpenAI, model: str, messages: Any, *, stream: bool
) -> list[str]:
    """The answer's pieces: one for a plain completion, the content chunks of a stream."""
    if not stream:
        completion = await client.chat.completions.create(model=model, messages=messages)
        return [completion.choices[0].message.content or ""]
    chunks = await client.chat.completions.create(model=model, messages=messages, stream=True)
    return [c.choices[0].delta.content or "" async for c in chunks if c.choices]
