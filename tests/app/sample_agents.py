"""Agents defined in code, for the ``import:`` config tests."""

from collections.abc import AsyncIterator

import anyio

from agenthost.agents import ChatAgent, Message, TextDelta
from agenthost.agents.models import EchoModel, ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelStreamEvent
from agenthost.agents.models.echo import word_response


def shout(messages: list[Message]) -> str:
    """Answers in capitals."""
    return messages[-1].text.upper()


greeter = ChatAgent("greeter", EchoModel(), instructions="Greet.")
not_an_agent = 42


class PacedModel(BaseChatModel):
    """Streams one word every 0.1 s for a minute: a stream longer than any grace period."""

    name = "paced"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        words = []
        for _ in range(600):
            await anyio.sleep(0.1)
            words.append("word ")
            yield TextDelta("word ")
        yield word_response(request, Message.assistant("".join(words)))


paced = ChatAgent("paced", PacedModel())


async def stream_words(messages: list[Message]) -> AsyncIterator[str]:
    """Streams the last message back, word by word."""
    for word in messages[-1].text.split():
        yield word + " "
