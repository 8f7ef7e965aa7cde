"""Agents whose tools log: ``adder`` calls a tool that works, ``exploder`` one that
fails (test_logging.py in-process, the TypeScript SDK tests served)."""

from __future__ import annotations

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call


@tool
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("the fuse was lit")


def tool_user(name: str, arguments: str) -> FunctionModel:
    """Calls ``name`` once, then answers "done"."""

    def reply(request: ModelRequest) -> Reply:
        if request.messages[-1].role == "tool":
            return "done"
        return call(name, arguments)

    return FunctionModel(reply)


def adder() -> ChatAgent:
    return ChatAgent("adder", tool_user("add", '{"a": 2, "b": 3}'), tools=(add,))


def exploder() -> ChatAgent:
    return ChatAgent("exploder", tool_user("explode", "{}"), tools=(explode,))
