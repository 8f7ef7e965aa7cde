"""The contract between the app and a protocol adapter.

An adapter gets what it needs through :class:`AdapterContext` (never by
importing ``app`` or another adapter), gives the app a router without a
prefix (the app decides where it is mounted; the router may hold mounted
ASGI apps, e.g. ``Mount`` or ``router.add_route(path, asgi_app)``), a
lifespan (where it starts any server of its own, e.g. gRPC), and its
protocol's error shape for the errors the app raises before a request
reaches it (authentication, body size, unknown routes). An adapter may
also serve a few routes at the root (``root_router``: discovery documents),
and declares whether its root route also answers at the bare prefix
(``at_bare_prefix``: ``/mcp`` as well as ``/mcp/``).

Each adapter package owns its configuration (:class:`AdapterPackage`): its
``Settings`` (environment variables ``AGENTHOST_<PROTOCOL>_<FIELD>``), the
model of an agent's ``<protocol>:`` section (``AgentOptions``) and of the
config file's top-level ``<protocol>:`` section (``ConfigSection``), all
importable without the protocol's SDK; ``create(context, settings)`` makes
the adapter (and imports the SDK). Settings every protocol shares reach it
through the context. The app owns the memory managers it hands over, and
closes them; an adapter closes only what it made itself.

What an adapter may also do is declared, not probed: :class:`HasAsgiRoutes`,
:class:`HasStoreHealth`, :class:`HasBoundedStores`.

Every adapter keys what it stores (sessions, tasks, runs) by the request's
principal (:func:`principal_of`), and shows a principal only the agents it
may use (:meth:`AdapterContext.agents_for`): an agent hidden from a
principal answers exactly as an unknown one does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fastapi import APIRouter
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Scope

from agenthost.adapters.durable import DurableRuns, LocalRunLog
from agenthost.agents import ANONYMOUS, Agent, MemoryManager
from agenthost.agents.skills import Skill

PrincipalForKey = Callable[[str], str | None]
CallQuota = Callable[[str, bool], Awaitable[tuple[str, float] | None]]
"""``quota(principal, starts_run)`` for a call the HTTP app does not see (gRPC): None if the
principal's quotas let it in (its runs' tokens then count against it), else ``(why, seconds
until it may retry)``."""
"""The app's API-key check: the key's principal, or None for an unknown key."""
PrincipalForToken = Callable[[str], Awaitable[str | None]]
"""The app's bearer-token check, which may fetch the issuer's keys: the token's
principal, or None for a token refused."""


class BodyBytes(Protocol):
    """The app's body-bytes-in-flight budgets (``AGENTHOST_MAX_BODY_BYTES_IN_FLIGHT``,
    ``AGENTHOST_MAX_BODY_BYTES_PER_PRINCIPAL``), the very counters the HTTP bodies count
    against, for messages the app's middleware does not see (a WebSocket's)."""

    def hold(self, scope: Scope, count: int) -> tuple[int, str, str] | None:
        """Take ``count`` bytes for a message of the connection ``scope`` (its principal's,
        else its client address's): None once taken, else the refusal ``(status, message,
        code)`` as the HTTP path answers it (429 ``too_many_requests``, 503
        ``server_busy``), nothing taken."""
        ...

    def release(self, scope: Scope, count: int) -> None:
        """Give back ``count`` bytes :meth:`hold` took for ``scope``."""
        ...


class Principal(str):
    """A caller's principal that also carries its grants: what an agent's ``allow`` list
    may name besides principals to let it in (a token's scopes, as ``scope:NAME``; a
    tenant, as ``tenant:NAME``).

    With a tenant, its value is ``TENANT/NAME``: the owner key of everything the caller
    stores, so two tenants never reach each other's state even with one principal name;
    ``name`` is the bare principal (what ``allow`` lists and quotas may name)."""

    grants: frozenset[str]
    name: str
    tenant: str | None

    def __new__(
        cls, name: str, grants: frozenset[str] = frozenset(), tenant: str | None = None
    ) -> Principal:
        principal = super().__new__(cls, f"{tenant}/{name}" if tenant else name)
        principal.grants = grants | {f"tenant:{tenant}"} if tenant else grants
        principal.name = name
        principal.tenant = tenant
        return principal


def principal_of(source: Scope | HTTPConnection) -> str:
    """Who is calling: the API key's principal, or ``anonymous`` with auth off; with a
    tenant, ``TENANT/NAME`` (a :class:`Principal`)."""
    scope = source.scope if isinstance(source, HTTPConnection) else source
    state = scope.get("state")
    principal = state.get("principal") if isinstance(state, Mapping) else None
    return principal if isinstance(principal, str) else ANONYMOUS


def may_use(allowed: frozenset[str] | None, principal: str) -> bool:
    """Whether an agent with the ``allow`` list ``allowed`` (None: open to all) lets
    ``principal`` in: it names the principal (``TENANT/NAME`` or the bare name) or one of
    its grants."""
    if allowed is None or principal in allowed:
        return True
    return isinstance(principal, Principal) and (
        principal.name in allowed or not principal.grants.isdisjoint(allowed)
    )


@dataclass(frozen=True, slots=True)
class AdapterContext:
    """What the app hands an adapter.

    ``agents`` holds every served agent (for lifespans and start-up work);
    requests must go through :meth:`agents_for`. ``allow`` maps an agent to
    the principals that may use it; an agent absent from it is open to all.
    ``new_memory(namespace)`` makes another bounded store with the same
    settings, for an adapter that keeps two kinds of state apart. ``skills``
    holds the skills an agent's config declares (absent: none declared).
    ``prefix`` is where the app mounts the adapter; ``principal_for_key`` is
    the app's key check for a transport of the adapter's own (gRPC; None:
    auth off); ``protocols`` names, per agent, the protocols serving it.
    """

    agents: Mapping[str, Agent]
    memory: MemoryManager
    allow: Mapping[str, frozenset[str]] = field(default_factory=dict)
    new_memory: Callable[[str], MemoryManager] | None = None
    skills: Mapping[str, Sequence[Skill]] = field(default_factory=dict)
    prefix: str = ""
    principal_for_key: PrincipalForKey | None = None
    principal_for_token: PrincipalForToken | None = None
    """With OIDC tokens on, the app's token check for a transport of the adapter's own:
    awaited before ``principal_for_key`` is asked (which then finds the token's key cached)."""
    protocols: Mapping[str, Sequence[str]] = field(default_factory=dict)
    token_issuer: str | None = None
    """The OIDC issuer whose tokens are accepted (None: tokens off), for discovery
    documents that declare how to authenticate (A2A cards)."""
    shared_sessions: frozenset[str] = frozenset()
    """Agents whose conversations every protocol shares: ``memory`` keeps their sessions
    (``SessionKey(agent, id, principal)``) in one namespace common to all adapters."""
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    """Agent → this adapter's own ``AgentOptions`` (the agent's ``<protocol>:`` section,
    defaults filled; absent for agents not built from a config file)."""
    config: Any = None
    """This adapter's ``ConfigSection`` of the config file (files read); None without a
    config file or when the protocol declares none."""
    lease_seconds: float = 15.0
    """``AGENTHOST_RUN_LEASE_SECONDS``: a detached run's lease with a shared store."""
    max_body_bytes: int = 4 * 1024 * 1024
    """``AGENTHOST_MAX_BODY_BYTES``: the largest request body."""
    keepalive_seconds: float = 15.0
    """``AGENTHOST_STREAM_KEEPALIVE_SECONDS``: silence before an SSE keep-alive comment."""
    durable: DurableRuns = field(default_factory=lambda: DurableRuns(LocalRunLog()))
    """The server's detached runs and their log, shared by every protocol
    (:mod:`agenthost.adapters.durable`): a protocol registers how it runs its records."""
    quota: CallQuota | None = None
    """The principals' quotas, for calls outside the HTTP app (None: no quota)."""
    body_bytes: BodyBytes | None = None
    """The body bytes in flight, shared with the HTTP bodies, for messages outside the HTTP
    app (None: not counted)."""

    def may_use(self, principal: str, agent: str) -> bool:
        return may_use(self.allow.get(agent), principal)

    def agents_for(self, principal: str) -> Mapping[str, Agent]:
        """The agents ``principal`` may see and run, by name."""
        if not self.allow:
            return self.agents
        return {n: a for n, a in self.agents.items() if self.may_use(principal, n)}

    def find_agent(self, principal: str, name: str) -> Agent | None:
        """The agent ``name`` if it exists and ``principal`` may use it."""
        agent = self.agents.get(name)
        return agent if agent is not None and self.may_use(principal, name) else None


class Adapter(Protocol):
    """A protocol surface of the server."""

    name: str
    at_bare_prefix: bool

    @property
    def router(self) -> APIRouter: ...

    @property
    def root_router(self) -> APIRouter | None:
        """Routes served at the root rather than under the prefix (discovery
        documents such as A2A's ``/.well-known/agent-card.json``), or None."""
        ...

    def lifespan(self) -> AbstractAsyncContextManager[Any]: ...

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        """The protocol's own error body for an error raised by the app."""
        ...


@runtime_checkable
class HasAsgiRoutes(Protocol):
    """An adapter that serves its hottest routes as plain ASGI apps (:mod:`agenthost.app.lanes`)."""

    @property
    def asgi_routes(self) -> Mapping[tuple[str, str], ASGIApp]:
        """(method, path under the prefix) → the ASGI app answering it."""
        ...


@dataclass(frozen=True, slots=True)
class RequestRules:
    """What the app's request guards need to know of a protocol's routes (paths are
    regular expressions under the adapter's prefix)."""

    bodyless_posts: str | None = None
    """POST routes that read no body, so may come with no Content-Type (what the
    protocol's official clients send bodyless: a cancel, a subscribe)."""
    untyped_json_clients: bool = False
    """Its official client sends JSON bodies with no Content-Type (acp-sdk): a request
    that is no browser's may omit it."""
    strict_json: bool = False
    """Bodies are ``application/json`` and nothing else (no ``+json`` types)."""
    jsonrpc_paths: str | None = None
    """Its JSON-RPC endpoints, where an error the app answers is a JSON-RPC error."""


NO_RULES = RequestRules()


@runtime_checkable
class HasRequestRules(Protocol):
    """An adapter whose routes the app's request guards treat specially."""

    request_rules: RequestRules


@runtime_checkable
class HasStoreHealth(Protocol):
    """An adapter with a store it prepares at start-up (A2A's task tables), for ``/readyz``."""

    async def store_health(self) -> dict[str, str]:
        """Store name → ``up`` or ``down``."""
        ...

    @property
    def store_seen_up(self) -> bool:
        """Whether the store has answered since start (down since start: not ready)."""
        ...


@runtime_checkable
class HasBoundedStores(Protocol):
    """An adapter keeping stores bounded in bytes besides sessions (A2A tasks, ACP runs)."""

    def bounded_stores(self) -> list[tuple[str, Any]]:
        """(name, store) pairs whose evictions the metrics count."""
        ...


@runtime_checkable
class HasSiteAllowances(Protocol):
    """A protocol's ``Settings`` that widen what every surface's Host and Origin checks
    accept (MCP's allowed hosts, A2A's public URL)."""

    def site_hosts(self) -> list[str]:
        """Host headers to accept (a name without a port: any port)."""
        ...

    def site_origins(self) -> list[str]:
        """Browser origins to accept."""
        ...


@runtime_checkable
class HasPublicURL(Protocol):
    """A protocol's ``Settings`` naming the base URL clients reach the server at."""

    public_url: str | None


@runtime_checkable
class ReadsFiles(Protocol):
    """A ``ConfigSection`` naming files relative to the config file (MCP resources)."""

    def read_files(self, base_dir: Path | None) -> Any:
        """A copy with every file read in; OSError or UnicodeDecodeError for a bad one."""
        ...


class AdapterPackage(Protocol):
    """What each package under ``adapters/`` exports for the app to register it.

    The package's ``__init__`` imports no protocol SDK: the app reads
    ``Settings``, ``AgentOptions`` and ``ConfigSection`` of every protocol (for
    the settings, the config schema and the docs), and ``create`` imports the
    SDK only for a protocol served.
    """

    Settings: type[Any]
    """A pydantic-settings model with ``env_prefix="AGENTHOST_<PROTOCOL>_"``."""
    AgentOptions: type[Any] | None
    """The pydantic model of an agent's ``<protocol>:`` section, or None."""
    ConfigSection: type[Any] | None
    """The pydantic model of the config file's top-level ``<protocol>:`` section, or None."""

    def create(self, context: AdapterContext, settings: Any) -> Adapter: ...
