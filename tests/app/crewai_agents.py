"""CrewAI agents for the served tests; their LLM is the upstream OPENAI_BASE_URL names."""

import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import LLM, Agent


def llm(name: str, *, stream: bool = False) -> LLM:
    base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    return LLM(model=f"openai/{name}", base_url=base, api_key=key, stream=stream)


helper = Agent(role="helper", goal="Help.", backstory="Kind.", llm=llm("any"))
# The fake upstream's 10 s stream (CrewAI streams from the model, answers when done).
slow = Agent(role="slow", goal="Take your time.", backstory="Calm.", llm=llm("slow", stream=True))
