"""A code agent that prints to stdout, for the stdio tests: its output must not reach the wire."""

from agenthost.agents import Message


def noisy(messages: list[Message]) -> str:
    """Prints, then answers in capitals."""
    print("this print must not reach the MCP client")
    return messages[-1].text.upper()
