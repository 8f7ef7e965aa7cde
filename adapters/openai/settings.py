"""The OpenAI-compatible adapter's settings (``AGENTHOST_OPENAI_…``): none of its own yet."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The OpenAI adapter has no settings of its own yet."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_OPENAI_", extra="forbid")
