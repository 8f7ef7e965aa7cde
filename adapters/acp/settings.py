"""The IBM ACP adapter's settings (``AGENTHOST_ACP_…``), importable without acp-sdk."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Runs kept for ``GET /acp/runs/{id}``; running ones are never dropped."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_ACP_", extra="forbid")

    max_runs: int = Field(
        1000,
        ge=1,
        description="IBM ACP: runs kept for GET /acp/runs/{id}; beyond it finished and awaiting "
        "runs go, oldest first (running ones are never dropped).",
    )
    max_run_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="IBM ACP: bytes of kept runs (their event logs as JSON); beyond it finished "
        "and awaiting runs go, oldest first.",
    )
    run_ttl: float = Field(
        3600.0, gt=0, description="IBM ACP: seconds a finished or awaiting run is kept."
    )
