"""A small MCP server for the MCP examples (needs the tools-mcp extra).

stdio (started by agenthost, see mcp-stdio.yaml):  python example_mcp_server.py
streamable HTTP (see mcp-http.yaml):                python example_mcp_server.py http 8001
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool()
def add_note(text: str) -> str:
    """Keep a note for later."""
    NOTES.append(text)
    return f"noted ({len(NOTES)} notes)"


@server.tool()
def list_notes() -> list[str]:
    """Every note kept so far, oldest first."""
    return NOTES


@server.tool()
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        port = int(sys.argv[2]) if len(sys.argv) > 2 else 8001
        app = server.streamable_http_app(stateless_http=True, json_response=True)
        uvicorn.run(app, host="127.0.0.1", port=port)
    else:
        server.run("stdio")
