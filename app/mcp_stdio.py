"""``agenthost mcp-stdio``: the MCP tools over stdin/stdout, for desktop clients."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio

from agenthost.adapters.base import AdapterContext
from agenthost.app.memory import memory_factory
from agenthost.app.registry import Registry
from agenthost.app.server import mcp_options
from agenthost.app.settings import Settings


def serve_mcp_stdio(settings: Settings, registry: Registry) -> int:
    """Serve the agents exposed to MCP over stdio until the client closes stdin."""
    from agenthost.adapters.mcp.server import ServerOptions
    from agenthost.adapters.mcp.stdio import serve_stdio

    # stdout carries the protocol: every log line goes to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )

    new_memory = memory_factory(settings.session_max, settings.session_ttl)

    agents = registry.exposed_by("mcp")
    context = AdapterContext(agents, new_memory("mcp"), registry.allow, new_memory)
    options = mcp_options(settings, registry)

    @asynccontextmanager
    async def lifespans() -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for agent in agents.values():
                await stack.enter_async_context(agent.lifespan())
            logging.getLogger("agenthost").info(
                "serving %d agents over MCP stdio: %s", len(agents), ", ".join(agents)
            )
            yield

    server_options = ServerOptions(options.progress_interval, options.protocols)
    anyio.run(serve_stdio, context, server_options, lifespans())
    return 0
