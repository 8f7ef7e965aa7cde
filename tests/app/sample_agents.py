"""Agents defined in code, for the ``import:`` config tests."""

from collections.abc import AsyncIterator

from agents import ChatAgent, Message
from agents.models import EchoModel


def shout(messages: list[Message]) -> str:
    """Answers in capitals."""
    return messages[-1].text.upper()


greeter = ChatAgent("greeter", EchoModel(), instructions="Greet.")
not_an_agent = 42


async def stream_words(messages: list[Message]) -> AsyncIterator[str]:
    """Streams the last message back, word by word."""
    for word in messages[-1].text.split():
        yield word + " "
