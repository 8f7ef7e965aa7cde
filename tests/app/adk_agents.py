"""ADK agents for the served tests; their model is the upstream OPENAI_BASE_URL names."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list from GitHub

import litellm  # noqa: F401  # at start-up (readiness), not at the first request: it takes seconds
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm


def model(name: str) -> LiteLlm:
    base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    return LiteLlm(model=f"openai/{name}", api_base=base, api_key=key)


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


helper = LlmAgent(name="helper", model=model("any"), instruction="Shout.", tools=[shout])
slow = LlmAgent(name="slow", model=model("slow"))  # the fake upstream's 10 s stream
