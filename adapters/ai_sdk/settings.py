"""The AI SDK adapter's settings (``AGENTHOST_AI_SDK_…``): none of its own yet."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The AI SDK adapter has no settings of its own yet."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_AI_SDK_", extra="forbid")
