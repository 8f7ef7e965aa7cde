"""``agenthost mcp-stdio``: the MCP tools over stdin/stdout, for desktop clients."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agenthost.app.host import Host
from agenthost.app.logs import use_json
from agenthost.app.metrics import current_protocol


def serve_mcp_stdio(host: Host) -> int:
    """Serve the agents exposed to MCP over stdio until the client closes stdin."""
    from agenthost.adapters.mcp import MCPOptions
    from agenthost.adapters.mcp.server import ServerOptions
    from agenthost.adapters.mcp.stdio import serve_stdio

    log_to_stderr(host)
    context = host.context("mcp")
    options: MCPOptions = host.options("mcp", MCPOptions)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with host.running():
            logging.getLogger("agenthost").info(
                "serving %d agents over MCP stdio: %s",
                len(context.agents),
                ", ".join(context.agents),
            )
            yield

    server_options = ServerOptions(options.progress_interval, context.protocols)
    current_protocol.set("mcp")  # the run's task inherits it: the metrics' label
    anyio.run(serve_stdio, context, server_options, running())
    return 0


def log_to_stderr(host: Host) -> None:
    """stdout carries a stdio protocol: every log line goes to stderr."""
    logging.basicConfig(
        stream=sys.stderr,
        level=host.settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if host.settings.log_format == "json":
        use_json()
