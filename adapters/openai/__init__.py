"""OpenAI-compatible API: Chat Completions, Responses and Models."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthost.adapters.openai.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.base import AdapterContext
    from agenthost.adapters.openai.adapter import OpenAIAdapter

AgentOptions = None
"""The OpenAI adapter has no per-agent section in the config file."""
ConfigSection = None
"""The OpenAI adapter has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> OpenAIAdapter:
    """The adapter the app mounts (at ``/v1``)."""
    from agenthost.adapters.openai.adapter import OpenAIAdapter

    return OpenAIAdapter(context)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
