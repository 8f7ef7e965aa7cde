"""OpenAI-compatible API: Chat Completions, Responses and Models."""

from agenthost.adapters.openai.adapter import OpenAIAdapter

__all__ = ["OpenAIAdapter"]
