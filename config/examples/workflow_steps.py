"""The state and function steps of workflow.yaml."""

from pydantic import BaseModel, Field


class Haiku(BaseModel):
    """What the haiku workshop knows as it goes."""

    topic: str
    request: str = ""
    draft: str = ""
    attempts: int = Field(0, ge=0, le=3)
    poem: str = ""


def brief(state: Haiku) -> str:
    """Turn the user's topic into the poet's task."""
    state.request = f"Write a haiku about {state.topic.strip() or 'the sea'}."
    return "NEXT"


def check(state: Haiku) -> str:
    """Accept a draft of three lines, or ask again (three attempts at most)."""
    state.attempts += 1
    lines = [line for line in state.draft.splitlines() if line.strip()]
    if len(lines) == 3 or state.attempts >= 3:
        state.poem = "\n".join(lines) or state.draft
        return "END"
    return "write"
