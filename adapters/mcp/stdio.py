"""The same tools over stdio, for desktop clients that spawn a command.

Nothing but protocol messages goes to stdout: while serving, the SDK points
file descriptor 1 at stderr, so a stray ``print`` (or a native library's
output) lands in the log instead of the wire. The agents' lifespans (e.g.
a local model) are entered inside that, once, and closed on exit. The
caller is the anonymous principal; sessions live in this process.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.stdio import stdio_server

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.mcp.server import ServerOptions, build_server


async def serve_stdio(
    context: AdapterContext,
    options: ServerOptions,
    resources: AbstractAsyncContextManager[Any],
) -> None:
    """Serve until stdin closes; ``resources`` (the host's agents, tools and stores) span it."""
    server = build_server(context, options)
    async with stdio_server() as (read, write), resources:
        await server.run(read, write, server.create_initialization_options())
