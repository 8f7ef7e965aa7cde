"""An agent whose tool sleeps for a minute, for tests that cancel runs."""

from __future__ import annotations

import threading

import anyio

from agents import ChatAgent, tool
from agents.models import FunctionModel, ModelRequest
from agents.models.testing import Reply, call


class SlowTool:
    """An agent whose tool sleeps for a minute, and what became of the tool."""

    def __init__(self) -> None:
        self.started, self.cancelled = threading.Event(), threading.Event()

        @tool
        async def slow() -> str:
            """Takes a minute."""
            self.started.set()
            try:
                await anyio.sleep(60)
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return "late"

        def reply(request: ModelRequest) -> Reply:
            return "done" if request.messages[-1].role == "tool" else call("slow")

        self.agent = ChatAgent("slow", FunctionModel(reply), tools=(slow,))
