"""Settings from the environment (prefix ``AGENTHOST_``); CLI flags override them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.principals import KeysError, build_principals, read_keys_file

AdapterName = Literal["openai", "a2a", "mcp", "acp"]


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
        description="Accepted API keys, comma-separated, each 'name:KEY' (the name is the "
        "principal) or a bare KEY; unset or empty means no auth.",
    )
    api_keys_file: Path | None = Field(
        None, description="A file of API keys, one 'name:KEY' per line; adds to api_keys."
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

    # A2A (adapters/a2a): public URLs, gRPC, task store.
    a2a_public_url: str | None = Field(
        None,
        description="A2A: base URL clients reach this server at (e.g. https://agents.example.com), "
        "used in agent cards; unset means taken from each request.",
    )
    a2a_trust_forwarded: bool = Field(
        False,
        description="A2A: build card URLs from X-Forwarded-Proto/Host/Prefix (only behind a "
        "proxy that sets them).",
    )
    a2a_default_agent: str | None = Field(
        None,
        description="A2A: the agent whose card /.well-known/agent-card.json serves, and that "
        "gRPC calls without a tenant reach; unset means 404 / the only agent.",
    )
    a2a_grpc_port: int = Field(
        0, ge=0, le=65535, description="A2A: gRPC port serving every agent; 0 disables gRPC."
    )
    a2a_grpc_host: str = Field("127.0.0.1", description="A2A: interface the gRPC server binds.")
    a2a_grpc_public_host: str | None = Field(
        None, description="A2A: host:port of the gRPC server in agent cards; unset means derived."
    )
    a2a_task_store: str = Field(
        "memory",
        description="A2A: where tasks live: 'memory' or 'sqlite:///path/to/tasks.db'.",
    )
    a2a_task_max: int = Field(
        10_000, ge=1, description="A2A: finished tasks kept in memory per agent (oldest dropped)."
    )
    a2a_task_ttl: float = Field(
        3600.0, gt=0, description="A2A: seconds a finished in-memory task is kept."
    )
    a2a_push_private_networks: bool = Field(
        False,
        description="A2A: allow push-notification webhooks on loopback/private addresses "
        "(off: only public hosts, so clients cannot reach into your network).",
    )
    a2a_card_v03: bool = Field(
        True,
        description="A2A: list the 0.3 interfaces (and the 0.3 card fields 0.3 clients read) in "
        "agent cards; off gives a strict 1.0 card.",
    )

    @field_validator("adapters", "api_keys", "cors_origins", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            items = [item.strip() for item in value.split(",") if item.strip()]
            if value.strip() and not items:
                # " , " must not silently mean "no auth" (or "no adapters").
                raise ValueError(f"{value!r} lists nothing; leave it unset or empty instead")
            return items
        return value

    def principals(self) -> dict[str, str]:
        """API key → principal name, from ``api_keys`` and ``api_keys_file``; empty = no auth."""
        entries = [key.get_secret_value() for key in self.api_keys]
        if self.api_keys_file is not None:
            from_file = read_keys_file(self.api_keys_file)
            if not from_file:
                raise KeysError(f"the API keys file {self.api_keys_file} holds no key")
            entries += from_file
        return build_principals(entries)
