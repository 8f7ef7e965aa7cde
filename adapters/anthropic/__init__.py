"""Anthropic's Messages API: ``POST /v1/messages`` and ``/v1/messages/count_tokens``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthost.adapters.anthropic.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.anthropic.adapter import AnthropicAdapter
    from agenthost.adapters.base import AdapterContext

AgentOptions = None
"""The Anthropic adapter has no per-agent section in the config file."""
ConfigSection = None
"""The Anthropic adapter has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> AnthropicAdapter:
    """The adapter the app mounts (at ``/v1/messages``)."""
    from agenthost.adapters.anthropic.adapter import AnthropicAdapter

    return AnthropicAdapter(context)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
