"""MCP: every agent as a tool, over streamable HTTP (``/mcp``) and stdio.

Needs the ``mcp`` extra: ``pip install 'agenthost[mcp]'``. Importing this
package imports no SDK: the app reads :class:`Settings`, :data:`AgentOptions`
(an agent's ``mcp:``) and :data:`ConfigSection` (the top-level ``mcp:``);
:func:`create` and :mod:`agenthost.adapters.mcp.command` load the SDK.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agenthost.adapters.mcp import specs
from agenthost.adapters.mcp.settings import Settings
from agenthost.adapters.mcp.specs import AgentOptions, ConfigSection

if TYPE_CHECKING:
    from agenthost.adapters.base import AdapterContext
    from agenthost.adapters.mcp.adapter import MCPAdapter


def require_sdk() -> None:
    """Raise ImportError naming the extra when the MCP SDK is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "the MCP adapter needs the 'mcp' extra: pip install 'agenthost[mcp]'"
        ) from exc


def with_declared(context: AdapterContext) -> AdapterContext:
    """``context`` whose ``config`` is the JSON the MCP server reads: the config's ``mcp:``
    section and the agents' ``mcp:`` options together (:func:`.specs.declared`)."""
    return replace(context, config=specs.declared(context.config, context.agent_options))


def create(context: AdapterContext, settings: Settings) -> MCPAdapter:
    """The adapter the app mounts (at ``/mcp``); tool descriptions name each agent's protocols."""
    require_sdk()
    from agenthost.adapters.mcp.adapter import MCPAdapter, MCPOptions

    options = MCPOptions(
        **settings.model_dump(),
        max_body_bytes=context.max_body_bytes,
        run_lease_seconds=context.lease_seconds,
        protocols=context.protocols,
    )
    return MCPAdapter(with_declared(context), options)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create", "require_sdk"]
