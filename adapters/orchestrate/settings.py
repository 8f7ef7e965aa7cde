"""The Orchestrate adapter's settings (``AGENTHOST_ORCHESTRATE_…``): none of its own yet."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The Orchestrate adapter has no settings of its own yet."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_ORCHESTRATE_", extra="forbid")
