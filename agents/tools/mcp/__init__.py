"""Tools from external MCP servers (stdio or streamable HTTP); needs the ``tools-mcp`` extra."""

from agenthost.agents.tools.mcp.connection import (
    HTTPServer,
    MCPConnection,
    MCPServerError,
    MCPServers,
    StdioServer,
)
from agenthost.agents.tools.mcp.tools import MCPTool, MCPToolset, result_text

__all__ = [
    "HTTPServer",
    "MCPConnection",
    "MCPServerError",
    "MCPServers",
    "MCPTool",
    "MCPToolset",
    "StdioServer",
    "result_text",
]
