"""The MCP adapter's settings (``AGENTHOST_MCP_…``), importable without the MCP SDK.

They serve the ``/mcp`` endpoint and the ``mcp-stdio`` command. An agent's
``mcp:`` section and the config file's top-level ``mcp:`` section are
:mod:`agenthost.adapters.mcp.specs`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agenthost.adapters.setting_values import split_commas


class Settings(BaseSettings):
    """Transport, sessions, progress and tasks of the MCP server."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_MCP_", extra="forbid")

    stateless: bool = Field(
        True,
        description="Serve handshake-era MCP clients without Mcp-Session-Id sessions, so any "
        "replica answers any request (no sticky sessions). Off: sessions live in this process "
        "and allow elicitation inside a call and logging/setLevel per session.",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host headers every surface (/mcp and the others) accepts besides "
        "localhost, 127.0.0.1 and [::1] (any port), comma-separated; a name without a port "
        "allows any port. Once set, other hosts get 421 (DNS-rebinding protection), as with "
        "AGENTHOST_ALLOWED_HOSTS.",
    )
    allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Browser Origin headers every surface (/mcp and the others) accepts besides "
        "local ones, comma-separated; other origins get 403.",
    )
    progress_interval: float = Field(
        0.1, ge=0, description="Least seconds between two progress notifications of a tool call."
    )
    session_idle_timeout: float = Field(
        1800.0, gt=0, description="Seconds an idle MCP session is kept (stateful mode only)."
    )
    max_sessions: int = Field(
        1000,
        ge=1,
        description="Open MCP transport sessions at most (stateful mode only); a request that "
        "would open another gets 503 until one ends or idles out.",
    )
    sse_retry_ms: int = Field(
        1000,
        ge=0,
        description="The retry field (milliseconds) of the priming event each MCP SSE stream "
        "opens with: how long a client waits before it reconnects a dropped stream.",
    )
    max_tasks: int = Field(
        1000,
        ge=1,
        description="MCP tasks (2026-07-28 tasks extension) kept in this process at most; past "
        "it the oldest finished task is dropped, and when all are running a call runs "
        "without a task.",
    )
    task_ttl: float = Field(
        3600.0,
        gt=0,
        description="Seconds a finished MCP task (and its result) stays readable by tasks/get.",
    )

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        return split_commas(value)

    def site_hosts(self) -> list[str]:
        """Every surface accepts the hosts /mcp accepts (one Host check for the server)."""
        return list(self.allowed_hosts)

    def site_origins(self) -> list[str]:
        """Every surface accepts the origins /mcp accepts."""
        return list(self.allowed_origins)
