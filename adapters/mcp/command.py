"""The ``mcp-stdio`` command's server: the MCP tools over stdin/stdout, for desktop clients.

The app's command line makes the host and hands over what this needs: the
context (the agents exposed to MCP), the MCP settings and the host's running
resources (agents, tools, stores), entered once around the session.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.mcp import require_sdk, with_declared
from agenthost.adapters.mcp.settings import Settings


def serve_mcp_stdio(
    context: AdapterContext, settings: Settings, running: AbstractAsyncContextManager[Any]
) -> int:
    """Serve the agents of ``context`` over stdio until the client closes stdin."""
    require_sdk()
    from agenthost.adapters.mcp.server import ServerOptions
    from agenthost.adapters.mcp.stdio import serve_stdio

    server_options = ServerOptions(settings.progress_interval, context.protocols)
    anyio.run(serve_stdio, with_declared(context), server_options, running)
    return 0
