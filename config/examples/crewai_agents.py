"""The agents of crewai.yaml: a CrewAI Agent and a one-task Crew, on any OpenAI server."""

import os

# Before CrewAI is imported: no telemetry, no traces sent out.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import LLM, Agent, Crew, Task

llm = LLM(
    model="openai/" + os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
    base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "unset"),
)
helper = Agent(
    role="helper", goal="Answer the user briefly.", backstory="A helpful assistant.", llm=llm
)
writer = Agent(role="writer", goal="Write short, clear answers.", backstory="An editor.", llm=llm)
answer = Task(
    description="The conversation so far:\n{history}\n\nAnswer this message: {message}",
    expected_output="A short answer.",
    agent=writer,
)
crew = Crew(agents=[writer], tasks=[answer])
