"""The agent of beeai.yaml: a BeeAI RequirementAgent with one tool."""

import os

from beeai_framework.adapters.openai import OpenAIChatModel
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.backend import ChatModelParameters
from beeai_framework.tools import tool


@tool
def count_words(text: str) -> str:
    """Count the words of a text."""
    return str(len(text.split()))


llm = OpenAIChatModel(
    os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
    base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "set-OPENAI_API_KEY"),
    parameters=ChatModelParameters(stream=True),  # the answer streams as the model writes it
)

agent = RequirementAgent(
    llm=llm,
    tools=[count_words],
    instructions="You are a helpful assistant. Answer briefly.",
)
