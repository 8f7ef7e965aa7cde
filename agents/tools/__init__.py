"""Tools an agent can call."""

from agents.tools.base import Tool, ToolDefinition, tool
from agents.tools.builtin import BUILTIN_TOOLS, calculator, current_time
from agents.tools.client import ASK_USER, ClientTool, answer_pending, question_of

__all__ = [
    "ASK_USER",
    "BUILTIN_TOOLS",
    "ClientTool",
    "Tool",
    "ToolDefinition",
    "answer_pending",
    "calculator",
    "current_time",
    "question_of",
    "tool",
]
