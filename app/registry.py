"""The registry: Python type → factory that wraps an object into an :class:`Agent`.

Lookup walks the object's MRO, so a factory registered for a base class
serves its subclasses. Each registry owns its table. Objects with no
factory, and duplicate agent names, are refused when they are added (at
start-up), never at the first request. Third-party frameworks plug in
through the ``agenthost.factories`` entry-point group: each entry point names
a function ``register(registry)``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from importlib.metadata import entry_points
from typing import Any, Protocol

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
        self._agents: dict[str, Agent] = {}
        self.allow: dict[str, frozenset[str]] = {}
        """Agent → the principals that may use it (agents not listed are open to all)."""
        self.skills: dict[str, tuple[Skill, ...]] = {}
        """Agent → the skills it advertises (agents not listed advertise a default one)."""
        self.message_replies: set[str] = set()
        """Agents that answer A2A requests with a direct Message when they can (``a2a.reply``)."""
        self.sessions: dict[str, str] = {}
        """Agent → 'shared' or 'isolated' where its config says (else the setting)."""
        self.expose: dict[str, frozenset[str]] = {}
        """Agent → the adapters that serve it (agents not listed are served by all)."""
        self.resources: list[Resource] = []
        self.mcp: dict[str, Any] = {}
        """The config's MCP declarations, as JSON (:func:`agenthost.app.mcp_specs.declared`)."""
        """What agents share (MCP server connections): started before them, stopped after."""

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
        registry._agents = dict(agents)
        return registry

    def with_agents(self, agents: Mapping[str, Agent]) -> Registry:
        """A registry like this one (allow lists, skills, resources...) serving ``agents``,
        the same names in other forms (served copies); this one is left as it was."""
        registry = copy.copy(self)
        registry._agents = dict(agents)
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
    ) -> Agent:
        """Wrap ``obj`` and serve it as ``name``.

        Only to the ``allow`` principals and over the ``expose`` adapters, if given.
        """
        if name in self._agents:
            raise RegistryError(f"duplicate agent name {name!r}")
        agent = self.factory_for(obj)(obj, name, description)
        self._agents[name] = agent
        if allow is not None:
            self.allow[name] = frozenset(allow)
        if expose is not None:
            self.expose[name] = frozenset(expose)
        if skills is not None:
            self.skills[name] = tuple(skills)
        return agent

    def exposed_by(self, adapter: str) -> dict[str, Agent]:
        """The agents that ``adapter`` serves."""
        return {n: a for n, a in self._agents.items() if adapter in self.expose.get(n, (adapter,))}

    def __getitem__(self, name: str) -> Agent:
        return self._agents[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._agents)

    def __len__(self) -> int:
        return len(self._agents)


def _qualname(kind: type) -> str:
    module = inspect.getmodule(kind)
    prefix = f"{module.__name__}." if module and module.__name__ != "builtins" else ""
    return prefix + kind.__qualname__
