"""A small MCP server for the tests.

``python -m tests.agents.tools.mcp_server stdio``, or
``python -m tests.agents.tools.mcp_server http PORT [TOKEN]`` (with a token,
requests without ``Authorization: Bearer TOKEN`` get 401).
"""

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
    from starlette.types import ASGIApp, Receive, Scope, Send

    app: ASGIApp = server.streamable_http_app(stateless_http=True, json_response=True)
    if len(argv) > 2:
        inner, expected = app, f"Bearer {argv[2]}".encode()

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
            await inner(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
