"""The Vercel AI SDK's UI message stream (``useChat``), with no SDK of its own: the wire
format is plain JSON over SSE, so this adapter needs no extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthost.adapters.ai_sdk.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.ai_sdk.adapter import AISDKAdapter
    from agenthost.adapters.base import AdapterContext

AgentOptions = None
"""The AI SDK stream has no per-agent section in the config file."""
ConfigSection = None
"""The AI SDK stream has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> AISDKAdapter:
    """The adapter the app mounts (at ``/ai-sdk``)."""
    from agenthost.adapters.ai_sdk.adapter import AISDKAdapter

    return AISDKAdapter(context, settings)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
