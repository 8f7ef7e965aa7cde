"""The agent of agent-framework.yaml: a Microsoft Agent Framework Agent with one tool."""

import os

from agent_framework import Agent
from agent_framework.openai import OpenAIChatCompletionClient


def count_words(text: str) -> str:
    """Count the words of a text."""
    return str(len(text.split()))


client = OpenAIChatCompletionClient(
    model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
    base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "set-OPENAI_API_KEY"),
)

agent = Agent(
    client=client,
    instructions="You are a helpful assistant. Answer briefly.",
    tools=[count_words],
)
