"""The agent of adk.yaml: an ADK LlmAgent with one tool, on any OpenAI-compatible server."""

import os

# LiteLLM reads its price list from the package, not from GitHub at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


model = LiteLlm(
    model="openai/" + os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
    api_base=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "unset"),
)
agent = LlmAgent(
    name="helper",
    model=model,
    instruction="You are a helpful assistant. Answer briefly; count words with the tool.",
    tools=[count_words],
)
