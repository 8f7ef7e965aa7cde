"""MCP: every agent as a tool, over streamable HTTP (``/mcp``) and stdio.

Needs the ``mcp`` extra: ``pip install 'agenthost[mcp]'``. Importing this
package imports no SDK: the app reads :class:`Settings`, :data:`AgentOptions`
(an agent's ``mcp:``) and :data:`ConfigSection` (the top-level ``mcp:``);
:func:`create` and :mod:`agenthost.adapters.mcp.command` load the SDK.

The SDK is the costliest import of the server (``mcp_types`` builds two
protocol revisions' pydantic models: about a third of a start-up's CPU), so
with stores of this process only, :func:`create` returns a stand-in that
builds the adapter on the first ``/mcp`` request
(:class:`~agenthost.adapters.deferred.DeferredAdapter`). With a store the
replicas share (sessions or detached runs in Redis), the adapter is built at
start-up: it must listen for other replicas' cancels and replies, and resume
their orphaned task runs, before any request of its own.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import TYPE_CHECKING

import orjson
from starlette.responses import Response

from agenthost.adapters.base import RequestRules
from agenthost.adapters.cancels import is_shared
from agenthost.adapters.deferred import DeferredAdapter
from agenthost.adapters.mcp import specs
from agenthost.adapters.mcp.settings import Settings
from agenthost.adapters.mcp.specs import AgentOptions, ConfigSection

if TYPE_CHECKING:
    from agenthost.adapters.base import AdapterContext
    from agenthost.adapters.mcp.adapter import MCPAdapter

REQUEST_RULES = RequestRules(strict_json=True)
"""The MCP SDK's transport answers any type but application/json with a plain-text 400."""


def require_sdk() -> None:
    """Raise ImportError naming the extra when the MCP SDK is missing (imports nothing)."""
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("mcp_types") is None:
        raise ImportError("the MCP adapter needs the 'mcp' extra: pip install 'agenthost[mcp]'")


def error_response(status: int, message: str, code: str) -> Response:
    """A JSON-RPC error without an id, as the SDK answers transport-level refusals."""
    error = {
        "code": -32603 if status >= 500 else -32600,
        "message": message,
        "data": {"code": code},
    }
    body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    return Response(body, status, media_type="application/json")


def with_declared(context: AdapterContext) -> AdapterContext:
    """``context`` whose ``config`` is the JSON the MCP server reads: the config's ``mcp:``
    section and the agents' ``mcp:`` options together (:func:`.specs.declared`)."""
    return replace(context, config=specs.declared(context.config, context.agent_options))


def create(context: AdapterContext, settings: Settings) -> MCPAdapter | DeferredAdapter:
    """The adapter the app mounts (at ``/mcp``), or its stand-in until the first request
    with stores of this process only (see the module). The config's MCP declarations are
    checked here either way: a bad one stops start-up."""
    require_sdk()
    context = with_declared(context)
    specs.check(context.config, context.agents)
    if is_shared(context.memory) or context.durable.log.shared:
        return _build(context, settings)
    return DeferredAdapter(
        "mcp",
        context.prefix,
        lambda: _build(context, settings),
        error=error_response,
        at_bare_prefix=True,  # MCP clients POST to /mcp, and some refuse a redirect to /mcp/
        request_rules=REQUEST_RULES,
    )


def _build(context: AdapterContext, settings: Settings) -> MCPAdapter:
    """The adapter (imports the SDK); tool descriptions name each agent's protocols."""
    from agenthost.adapters.mcp.adapter import MCPAdapter, MCPOptions

    options = MCPOptions(
        **settings.model_dump(),
        max_body_bytes=context.max_body_bytes,
        run_lease_seconds=context.lease_seconds,
        protocols=context.protocols,
    )
    return MCPAdapter(context, options)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create", "require_sdk"]
