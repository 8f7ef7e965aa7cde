"""Toolsets: tools an agent gets from elsewhere, known only once they are started.

An MCP server's tools are listed when its connection opens (in the app's
lifespan), so an agent holds the toolset, not the tools; the chat loop asks
the toolset for its current tools at the start of each run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agenthost.agents.tools.base import BaseTool


class Toolset(Protocol):
    """A named source of tools; ``tools()`` is cheap (no I/O) and may change over time."""

    name: str

    def tools(self) -> Sequence[BaseTool]: ...
