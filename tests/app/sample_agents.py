"""Agents defined in code, for the ``import:`` config tests."""

from agents import ChatAgent, Message
from agents.models import EchoModel


def shout(messages: list[Message]) -> str:
    """Answers in capitals."""
    return messages[-1].text.upper()


greeter = ChatAgent("greeter", EchoModel(), instructions="Greet.")
not_an_agent = 42
