"""The registry: Python type → factory that wraps an object into an :class:`Agent`.

Lookup walks the object's MRO, so a factory registered for a base class
serves its subclasses. Each registry owns its table. Objects with no
factory, and duplicate agent names, are refused when they are added (at
start-up), never at the first request. Third-party frameworks plug in
through the ``agenthost.factories`` entry-point group: each entry point names
a function ``register(registry)``.

Each served agent has one record, :class:`ServedAgent`: the agent and how its
config says to serve it (who may use it, over which protocols, its skills,
its sessions mode, and each protocol's own options).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Any, Literal, Protocol

from agenthost.agents import Agent, BaseAgent, FunctionAgent
from agenthost.agents.skills import Skill

Factory = Callable[[Any, str, str], Agent]
"""``factory(obj, name, description) -> Agent``."""

ENTRY_POINT_GROUP = "agenthost.factories"


class Resource(Protocol):
    """Something agents share, with a lifespan and a health report for ``/readyz``."""

    name: str

    def lifespan(self) -> AbstractAsyncContextManager[Any]: ...

    def health(self) -> Mapping[str, str]:
        """Component → ``up``, or ``down: <why>``."""
        ...


@dataclass(frozen=True, slots=True)
class ServedAgent:
    """One served agent and how it is served, as its config says.

    ``allow``: the principals that may use it (None: every caller);
    ``expose``: the protocols serving it (None: every one served);
    ``skills``: what it advertises (None: one skill made from its description);
    ``sessions``: 'shared' or 'isolated' (None: ``AGENTHOST_SESSIONS``);
    ``durable``: whether its detached runs resume on another replica (else they fail);
    ``options``: per protocol, that protocol's ``AgentOptions`` (its ``<protocol>:``
    section; absent: the protocol has none).
    """

    agent: Agent
    allow: frozenset[str] | None = None
    expose: frozenset[str] | None = None
    skills: tuple[Skill, ...] | None = None
    sessions: Literal["isolated", "shared"] | None = None
    durable: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)

    def exposed_by(self, protocol: str) -> bool:
        """Whether ``protocol`` serves this agent."""
        return self.expose is None or protocol in self.expose


class RegistryError(Exception):
    """An agent cannot be registered."""


def _wrap_agent(obj: Any, name: str, description: str) -> Agent:
    if obj.name != name:
        raise RegistryError(f"agent object is named {obj.name!r} but configured as {name!r}")
    agent: BaseAgent = obj
    agent.description = agent.description or description
    return agent


def _wrap_function(obj: Callable[..., Any], name: str, description: str) -> Agent:
    return FunctionAgent(name, obj, description=description)


class Registry(Mapping[str, Agent]):
    """The served agents, by name, and the factories that wrapped them."""

    def __init__(self) -> None:
        self._factories: dict[type, Factory] = {}
        self._plugins_pending = False
        """Whether the plugins are still to be loaded (at the first object no factory serves)."""
        self.served: dict[str, ServedAgent] = {}
        """Agent name → its record."""
        self.resources: list[Resource] = []
        """What agents share (MCP server connections): started before them, stopped after."""
        self.sections: dict[str, Any] = {}
        """Protocol → its ``ConfigSection`` of the config file (files read)."""

    @property
    def allow(self) -> dict[str, frozenset[str]]:
        """Agent → the principals that may use it (agents not listed are open to all)."""
        return {n: s.allow for n, s in self.served.items() if s.allow is not None}

    @property
    def skills(self) -> dict[str, tuple[Skill, ...]]:
        """Agent → the skills it advertises (agents not listed advertise a default one)."""
        return {n: s.skills for n, s in self.served.items() if s.skills is not None}

    @property
    def sessions(self) -> dict[str, str]:
        """Agent → 'shared' or 'isolated' where its config says (else the setting)."""
        return {n: s.sessions for n, s in self.served.items() if s.sessions is not None}

    @property
    def not_durable(self) -> frozenset[str]:
        """The agents whose orphaned detached runs fail instead of resuming elsewhere."""
        return frozenset(n for n, s in self.served.items() if not s.durable)

    def options_for(self, protocol: str) -> dict[str, Any]:
        """Agent → its ``protocol`` options, for the agents whose config has them."""
        return {n: s.options[protocol] for n, s in self.served.items() if protocol in s.options}

    @classmethod
    def with_defaults(cls, *, plugins: bool = True) -> Registry:
        """A registry that knows agenthost's own agents, functions and plugins."""
        registry = cls()
        registry.register_type(BaseAgent, _wrap_agent)
        registry.register_type(type(_wrap_function), _wrap_function)
        # Loaded when an object needs them: a config of agenthost's own agents never
        # imports the frameworks (seconds of start-up and tens of MiB).
        registry._plugins_pending = plugins
        return registry

    def _load_plugins(self) -> None:
        self._plugins_pending = False
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            entry.load()(self)

    @classmethod
    def of(cls, agents: Mapping[str, Agent]) -> Registry:
        """A registry serving agents built elsewhere (scripts, tests) as they are."""
        registry = cls()
        registry.served = {name: ServedAgent(agent) for name, agent in agents.items()}
        return registry

    def with_agents(self, agents: Mapping[str, Agent]) -> Registry:
        """A registry like this one (allow lists, skills, resources...) serving ``agents``,
        the same names in other forms (served copies); this one is left as it was."""
        registry = copy.copy(self)
        registry.served = {
            name: replace(record, agent=agents[name]) for name, record in self.served.items()
        }
        return registry

    def register_type(self, kind: type, factory: Factory) -> None:
        self._factories[kind] = factory

    def factory_for(self, obj: Any) -> Factory:
        for kind in type(obj).__mro__:
            if kind in self._factories:
                return self._factories[kind]
        if self._plugins_pending:
            self._load_plugins()
            return self.factory_for(obj)
        known = ", ".join(sorted(_qualname(k) for k in self._factories)) or "none"
        raise RegistryError(
            f"no agent factory for type {_qualname(type(obj))}; known types: {known}"
        )

    def add(
        self,
        name: str,
        obj: Any,
        description: str = "",
        *,
        allow: Iterable[str] | None = None,
        expose: Iterable[str] | None = None,
        skills: Iterable[Skill] | None = None,
        sessions: Literal["isolated", "shared"] | None = None,
        durable: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> Agent:
        """Wrap ``obj`` and serve it as ``name`` (see :class:`ServedAgent` for the rest).

        Only to the ``allow`` principals and over the ``expose`` adapters, if given.
        """
        if name in self.served:
            raise RegistryError(f"duplicate agent name {name!r}")
        agent = self.factory_for(obj)(obj, name, description)
        self.served[name] = ServedAgent(
            agent,
            allow=frozenset(allow) if allow is not None else None,
            expose=frozenset(expose) if expose is not None else None,
            skills=tuple(skills) if skills is not None else None,
            sessions=sessions,
            durable=durable,
            options=dict(options or {}),
        )
        return agent

    def exposed_by(self, adapter: str) -> dict[str, Agent]:
        """The agents that ``adapter`` serves."""
        return {n: s.agent for n, s in self.served.items() if s.exposed_by(adapter)}

    def __getitem__(self, name: str) -> Agent:
        return self.served[name].agent

    def __iter__(self) -> Iterator[str]:
        return iter(self.served)

    def __len__(self) -> int:
        return len(self.served)


def _qualname(kind: type) -> str:
    module = inspect.getmodule(kind)
    prefix = f"{module.__name__}." if module and module.__name__ != "builtins" else ""
    return prefix + kind.__qualname__
