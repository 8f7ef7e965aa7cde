"""The A2A adapter's configuration, importable without the A2A SDK.

:class:`Settings` are the ``AGENTHOST_A2A_…`` environment variables;
:class:`A2AAgentSpec` (exported as ``AgentOptions``) an agent's ``a2a:``
section in the config file.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Public URLs, gRPC, the task store and agent cards (``AGENTHOST_A2A_…``)."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_A2A_", extra="forbid")

    public_url: str | None = Field(
        None,
        description="A2A: base URL clients reach this server at (e.g. https://agents.example.com), "
        "used in agent cards; unset means taken from each request.",
    )
    trust_forwarded: bool = Field(
        False,
        description="A2A: build card URLs from X-Forwarded-Proto/Host/Prefix (only behind a "
        "proxy that sets them).",
    )
    default_agent: str | None = Field(
        None,
        description="A2A: the agent whose card /.well-known/agent-card.json serves, and that "
        "gRPC calls without a tenant reach; unset means the only agent if there is one, "
        "else 404.",
    )
    grpc_port: int = Field(
        0, ge=0, le=65535, description="A2A: gRPC port serving every agent; 0 disables gRPC."
    )
    grpc_host: str = Field("127.0.0.1", description="A2A: interface the gRPC server binds.")
    grpc_public_host: str | None = Field(
        None,
        description="A2A: host:port of the gRPC server in agent cards; unset means the "
        "request's host and the gRPC port.",
    )
    task_store: str = Field(
        "memory",
        description="A2A: where tasks live: 'memory', 'sqlite:///path/to/tasks.db' or "
        "'postgresql+asyncpg://user:password@host/db' (shared by replicas; tables made at "
        "start-up, or beforehand by `agenthost migrate`).",
    )
    task_max: int = Field(
        10_000, ge=1, description="A2A: finished tasks kept in memory per agent (oldest dropped)."
    )
    task_ttl: float = Field(
        3600.0,
        gt=0,
        description="A2A: seconds a finished in-memory task is kept (a task answered in one "
        "go reads its question and answer from its context's session: no longer than that).",
    )
    task_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="A2A: bytes of in-memory tasks kept per agent (their serialized size, "
        "history included; finished ones dropped oldest first beyond), and the same again for "
        "their push-notification configs (at most 10 per task, gone with the task).",
    )
    push_private_networks: bool = Field(
        False,
        description="A2A: allow push-notification webhooks on loopback/private addresses "
        "(off: only public hosts, so clients cannot reach into your network).",
    )
    card_v03: bool = Field(
        True,
        description="A2A: list the 0.3 interfaces (and the 0.3 card fields 0.3 clients read) in "
        "agent cards; off gives a strict 1.0 card.",
    )

    agent_stack: bool = Field(
        False,
        description="A2A: serve every agent with IBM Agent Stack's extensions (agent detail in "
        "the card, trajectory and error metadata, the platform's LLM for `model: agentstack`); "
        "an agent's `a2a: {agent_stack: true}` opts in one agent.",
    )
    agent_stack_platform_url: str = Field(
        "http://127.0.0.1:8333",
        description="A2A: Agent Stack's API URL, put for `{platform_url}` in the LLM endpoint "
        "the platform provides (as its PLATFORM_URL is for its own agents).",
    )
    agent_stack_register: bool = Field(
        False,
        description="A2A: register each Agent Stack agent with the platform at "
        "AGENTHOST_A2A_AGENT_STACK_PLATFORM_URL when the server starts (created, or updated "
        "when already there), as the agentstack-sdk's own agents self-register; needs "
        "AGENTHOST_A2A_PUBLIC_URL, the URL the platform reaches this server at.",
    )
    agent_stack_platform_token: SecretStr | None = Field(
        None,
        description="A2A: bearer token for Agent Stack's API when registering (unset: a "
        "platform without auth, as a local one).",
    )

    @model_validator(mode="after")
    def _registration_needs_a_public_url(self) -> Settings:
        if self.agent_stack_register and not self.public_url:
            raise ValueError(
                "AGENTHOST_A2A_AGENT_STACK_REGISTER needs AGENTHOST_A2A_PUBLIC_URL: the URL "
                "Agent Stack reaches this server's agents at"
            )
        return self

    def site_hosts(self) -> list[str]:
        """The public URL's host: every surface accepts it (DNS-rebinding check)."""
        return [urlsplit(self.public_url).netloc] if self.public_url else []

    def site_origins(self) -> list[str]:
        """The public URL's origin: every surface accepts it (browser Origin check)."""
        if not self.public_url:
            return []
        url = urlsplit(self.public_url)
        return [f"{url.scheme}://{url.netloc}"]


class A2AAgentSpec(BaseModel):
    """How the agent answers over A2A."""

    model_config = ConfigDict(extra="forbid")

    reply: Literal["task", "message"] = Field(
        "task",
        description="'task': every answer is a Task (default); 'message': an answer that "
        "finishes in one go is a direct Message (no task kept), while a run that asks the "
        "user something or fails still becomes a Task.",
    )

    agent_stack: bool = Field(
        False,
        description="Serve this agent with IBM Agent Stack's A2A extensions (see "
        "docs/protocols/agent-stack.md); AGENTHOST_A2A_AGENT_STACK turns them on for all.",
    )


AgentOptions = A2AAgentSpec
