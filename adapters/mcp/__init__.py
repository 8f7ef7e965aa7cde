"""MCP: every agent as a tool, over streamable HTTP (``/mcp``) and stdio."""

from __future__ import annotations

from dataclasses import replace

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the MCP adapter needs the 'mcp' extra: pip install 'agenthost[mcp]'"
    ) from exc

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.mcp.adapter import MCPAdapter, MCPOptions

Options = MCPOptions


def create(context: AdapterContext, options: MCPOptions) -> MCPAdapter:
    """The adapter the app mounts (at ``/mcp``); tool descriptions name each agent's protocols."""
    return MCPAdapter(context, replace(options, protocols=context.protocols))


__all__ = ["MCPAdapter", "MCPOptions", "Options", "create"]
