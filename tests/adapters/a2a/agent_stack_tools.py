"""What the Agent Stack tests' configs name: a tool that names its sources, for the
citation tests (a ``tools:`` entry ``tests.adapters.a2a.agent_stack_tools:search``), and
an agent whose model fails after it reasoned (``import:
tests.adapters.a2a.agent_stack_tools:ponderer``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from agenthost.agents import ChatAgent, ModelError, ReasoningDelta
from agenthost.agents.models import ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelStreamEvent

SOURCES = [
    {
        "url": "https://example.org/agenthost",
        "title": "agenthost",
        "snippet": "One process serves every agent.",
    },
    "https://example.org/a2a",
]

THOUGHT = "Thinking it over."
BROKE_OFF = "the upstream broke off"


def search(query: str) -> str:
    """Search the web; the result names its sources."""
    return json.dumps({"answer": f"found {query}", "sources": SOURCES})


class BrokenThinker(BaseChatModel):
    """Streams some reasoning, then fails as an upstream that broke off would."""

    name = "broken-thinker"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        yield ReasoningDelta(THOUGHT)
        raise ModelError(BROKE_OFF)


ponderer = ChatAgent("ponderer", BrokenThinker())
