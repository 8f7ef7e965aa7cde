"""The Anthropic Messages adapter's settings (``AGENTHOST_ANTHROPIC_…``): none of its own yet."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The Anthropic adapter has no settings of its own yet."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_ANTHROPIC_", extra="forbid")
