"""Tools an agent can call."""

from agents.tools.base import Tool, ToolDefinition, tool
from agents.tools.builtin import BUILTIN_TOOLS, calculator, current_time

__all__ = ["BUILTIN_TOOLS", "Tool", "ToolDefinition", "calculator", "current_time", "tool"]
