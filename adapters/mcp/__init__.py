"""MCP: every agent as a tool, over streamable HTTP (``/mcp``) and stdio."""

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the MCP adapter needs the 'mcp' extra: pip install 'agenthost[mcp]'"
    ) from exc

from agenthost.adapters.mcp.adapter import MCPAdapter, MCPOptions

__all__ = ["MCPAdapter", "MCPOptions"]
