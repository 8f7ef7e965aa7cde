"""What the A2A adapter works with: its settings, where it is mounted, the app's key check."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr

from agenthost.adapters.a2a.users import PrincipalForKey
from agenthost.adapters.base import PrincipalForToken


@dataclass(frozen=True, slots=True)
class A2AOptions:
    """The A2A adapter's options; every field has a working default.

    ``prefix`` is where the app mounts the adapter (card URLs need it).
    ``principal_for_key`` is the app's API-key check for gRPC calls (None:
    auth off); ``principal_for_token`` its OIDC token check, awaited first
    (None: tokens off); ``token_issuer`` the OIDC issuer the card names.
    ``grpc_port`` 0 serves no gRPC.
    """

    prefix: str = "/a2a"
    public_url: str | None = None
    trust_forwarded: bool = False
    default_agent: str | None = None
    grpc_port: int = 0
    grpc_host: str = "127.0.0.1"
    grpc_public_host: str | None = None
    task_store: str = "memory"
    task_max: int = 10_000
    task_ttl: float = 3600.0
    task_max_bytes: int = 64 * 1024 * 1024
    push_private_networks: bool = False
    card_v03: bool = True
    principal_for_key: PrincipalForKey | None = None
    principal_for_token: PrincipalForToken | None = None
    token_issuer: str | None = None
    message_replies: frozenset[str] = frozenset()
    agent_stack: bool = False
    agent_stack_platform_url: str = "http://127.0.0.1:8333"
    agent_stack_agents: frozenset[str] = frozenset()
    agent_stack_register: bool = False
    agent_stack_platform_token: SecretStr | None = None

    def serves_agent_stack(self, agent: str) -> bool:
        """Whether ``agent`` is served with Agent Stack's extensions."""
        return self.agent_stack or agent in self.agent_stack_agents

    @property
    def auth(self) -> bool:
        return self.principal_for_key is not None
