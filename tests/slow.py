"""An agent whose tool blocks for a minute, for tests that cancel runs."""

from __future__ import annotations

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from tests.blocking import Blocker


class SlowTool(Blocker):
    """An agent whose tool blocks for a minute; ``started`` / ``cancelled`` tell its fate."""

    def __init__(self) -> None:
        super().__init__()

        @tool
        async def slow() -> str:
            """Takes a minute."""
            return await self.block()

        def reply(request: ModelRequest) -> Reply:
            return "done" if request.messages[-1].role == "tool" else call("slow")

        self.agent = ChatAgent("slow", FunctionModel(reply), tools=(slow,))
