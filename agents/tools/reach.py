"""The tools an agent's model can call: what a UI or a card may show it has."""

from __future__ import annotations

from typing import Any

from agenthost.agents.tools.base import BaseTool


def callable_tools(agent: Any, *, found_at_run_time: bool = True) -> list[BaseTool]:
    """The tools ``agent``'s model can call: never one it cannot.

    A model that never chooses a tool on its own (``chooses_tools = False``:
    the embedded local model) calls only the tools its ``tool_choice``
    forces; with ``tool_choice: none`` no model calls any. With
    ``found_at_run_time`` false, the tools of toolsets (an MCP server's,
    listed when it is reached) are left out.
    """
    options = getattr(agent, "options", None)
    tools: list[BaseTool] = list(getattr(options, "tools", None) or ())
    if found_at_run_time:
        for toolset in getattr(agent, "toolsets", ()):
            tools += toolset.tools()
    settings = getattr(options, "model_settings", None)
    choice = getattr(settings, "tool_choice", None)
    if choice == "none":
        return []
    if getattr(getattr(agent, "model", None), "chooses_tools", True):
        return tools
    if choice in (None, "auto"):
        return []
    return tools if choice == "required" else [t for t in tools if t.name == choice]
