"""Settings from the environment (prefix ``AGENTHOST_``); CLI flags override them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

AdapterName = Literal["openai"]


class Settings(BaseSettings):
    """Everything about the process that is not an agent definition."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_", extra="forbid")

    config: Path = Field(Path("config/agents.yaml"), description="The agents' YAML file.")
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    access_log: bool = Field(True, description="One log line per request (~50 us CPU each).")

    adapters: Annotated[list[AdapterName], NoDecode] = Field(
        default_factory=lambda: list[AdapterName](["openai"]),
        description="Protocols to serve, comma-separated.",
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Accepted API keys, comma-separated; empty means no auth.",
    )

    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Browser origins allowed to call the API, comma-separated ('*' for any).",
    )

    session_max: int = Field(10_000, ge=1, description="Sessions kept per protocol (LRU).")
    session_ttl: float = Field(3600.0, gt=0, description="Seconds an idle session is kept.")
    drain_seconds: float = Field(
        0.0, ge=0, description="On SIGTERM, seconds of 503 from /readyz before the listener closes."
    )
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024, description="Larger bodies get 413.")

    @field_validator("adapters", "api_keys", "cors_origins", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value
