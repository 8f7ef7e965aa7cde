"""The AG-UI adapter's settings (``AGENTHOST_AG_UI_…``): none of its own yet."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The AG-UI adapter has no settings of its own yet."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_AG_UI_", extra="forbid")
