"""OpenAI-compatible API: Chat Completions, Responses and Models."""

from __future__ import annotations

from dataclasses import dataclass

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.openai.adapter import OpenAIAdapter


@dataclass(frozen=True, slots=True)
class OpenAIOptions:
    """The OpenAI adapter has no options of its own yet."""


Options = OpenAIOptions


def create(context: AdapterContext, options: OpenAIOptions) -> OpenAIAdapter:
    """The adapter the app mounts (at ``/v1``)."""
    return OpenAIAdapter(context)


__all__ = ["OpenAIAdapter", "OpenAIOptions", "Options", "create"]
