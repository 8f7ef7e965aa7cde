"""A small MCP server for the tests: ``python -m tests.agents.tools.mcp_server stdio|http PORT``."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-tools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with the reason (an isError result)."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def crash() -> str:
    """End the server process at once, as a crash would."""
    os._exit(3)


def main(argv: list[str]) -> None:
    if argv[0] == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
