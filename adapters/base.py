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

Each adapter package exports its options type as ``Options`` (a dataclass
whose fields the app fills from the settings named ``<protocol>_<field>``,
or ``<field>`` for a setting all protocols share) and
``create(context, options)``. The app owns the memory managers it hands
over, and closes them; an adapter closes only what it made itself.

Every adapter keys what it stores (sessions, tasks, runs) by the request's
principal (:func:`principal_of`), and shows a principal only the agents it
may use (:meth:`AdapterContext.agents_for`): an agent hidden from a
principal answers exactly as an unknown one does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import APIRouter
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import Scope

from agenthost.agents import ANONYMOUS, Agent, MemoryManager
from agenthost.agents.skills import Skill

PrincipalForKey = Callable[[str], str | None]
"""The app's API-key check: the key's principal, or None for an unknown key."""


def principal_of(source: Scope | HTTPConnection) -> str:
    """Who is calling: the API key's principal, or ``anonymous`` with auth off."""
    scope = source.scope if isinstance(source, HTTPConnection) else source
    state = scope.get("state")
    principal = state.get("principal") if isinstance(state, Mapping) else None
    return principal if isinstance(principal, str) else ANONYMOUS


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
    protocols: Mapping[str, Sequence[str]] = field(default_factory=dict)
    message_replies: frozenset[str] = frozenset()
    """Agents whose A2A answers are direct Messages when the run needs no task."""
    shared_sessions: frozenset[str] = frozenset()
    """Agents whose conversations every protocol shares: ``memory`` keeps their sessions
    (``SessionKey(agent, id, principal)``) in one namespace common to all adapters."""
    mcp: Mapping[str, Any] = field(default_factory=dict)
    """The config's MCP declarations (typed tool inputs, resources, prompts), as JSON."""

    def may_use(self, principal: str, agent: str) -> bool:
        allowed = self.allow.get(agent)
        return allowed is None or principal in allowed

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


class AdapterPackage(Protocol):
    """What each package under ``adapters/`` exports for the app to register it."""

    Options: type[Any]

    def create(self, context: AdapterContext, options: Any) -> Adapter: ...
