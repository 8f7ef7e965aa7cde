"""Tools an agent can call.

Runtime tools (:class:`BaseTool`: Python functions, MCP server tools,
``http_get``) all run through one pipeline (:mod:`agents.tools.pipeline`)
whose events any :class:`ToolHooks` can watch. Client tools
(:class:`ClientTool`, ``ask_user``) are answered by the client instead.
"""

from agenthost.agents.tools.base import BaseTool, ToolDefinition, ToolOptions
from agenthost.agents.tools.builtin import BUILTIN_TOOLS, calculator, current_time, think
from agenthost.agents.tools.cache import CacheOptions, ToolCache
from agenthost.agents.tools.client import (
    ASK_CLIENT_MODEL,
    ASK_USER,
    LIST_ROOTS,
    ClientTool,
    answer_pending,
    question_of,
)
from agenthost.agents.tools.events import LOGGING_HOOKS, LoggingHooks, ToolEvent, ToolHooks
from agenthost.agents.tools.functions import Tool, tool
from agenthost.agents.tools.toolsets import Toolset

__all__ = [
    "ASK_CLIENT_MODEL",
    "ASK_USER",
    "BUILTIN_TOOLS",
    "LIST_ROOTS",
    "LOGGING_HOOKS",
    "BaseTool",
    "CacheOptions",
    "ClientTool",
    "LoggingHooks",
    "Tool",
    "ToolCache",
    "ToolDefinition",
    "ToolEvent",
    "ToolHooks",
    "ToolOptions",
    "Toolset",
    "answer_pending",
    "calculator",
    "current_time",
    "question_of",
    "think",
    "tool",
]
