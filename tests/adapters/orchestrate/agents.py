"""Agents of the Orchestrate tests, importable by ``agenthost serve`` (``import:``)."""

from __future__ import annotations

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def add_then_say(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"The sum is {last.parts[0].content}."  # type: ignore[union-attr]
    return ["Let me add. ", call("add", '{"a": 2, "b": 3}')]


adder = ChatAgent("adder", FunctionModel(add_then_say), tools=(add,))
"""Calls its ``add`` tool once, then says the sum (served by ``agenthost serve``)."""
