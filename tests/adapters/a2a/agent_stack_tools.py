"""A tool that names its sources, for the Agent Stack citation tests (a config's
``tools:`` entry ``tests.adapters.a2a.agent_stack_tools:search``)."""

from __future__ import annotations

import json

SOURCES = [
    {
        "url": "https://example.org/agenthost",
        "title": "agenthost",
        "snippet": "One process serves every agent.",
    },
    "https://example.org/a2a",
]


def search(query: str) -> str:
    """Search the web; the result names its sources."""
    return json.dumps({"answer": f"found {query}", "sources": SOURCES})
