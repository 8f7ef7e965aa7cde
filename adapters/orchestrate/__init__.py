"""IBM watsonx Orchestrate's external agents (``provider: external_chat``), with no SDK of
its own: the wire format is plain JSON over SSE, so this adapter needs no extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthost.adapters.orchestrate.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.base import AdapterContext
    from agenthost.adapters.orchestrate.adapter import OrchestrateAdapter

AgentOptions = None
"""Orchestrate has no per-agent section in the config file."""
ConfigSection = None
"""Orchestrate has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> OrchestrateAdapter:
    """The adapter the app mounts (at ``/orchestrate``)."""
    from agenthost.adapters.orchestrate.adapter import OrchestrateAdapter

    return OrchestrateAdapter(context)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
