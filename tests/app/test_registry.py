from typing import Any

import pytest

from agenthost.agents import Agent, BaseAgent, ChatAgent, FunctionAgent
from agenthost.agents.models import EchoModel
from agenthost.app.registry import Registry, RegistryError


class Legacy:
    """A framework's agent type that agenthost does not know."""

    def __init__(self, reply: str) -> None:
        self.reply = reply


class FancyLegacy(Legacy):
    pass


def wrap_legacy(obj: Any, name: str, description: str) -> Agent:
    return FunctionAgent(name, lambda messages: obj.reply, description=description)


def test_factories_are_found_along_the_mro() -> None:
    registry = Registry.with_defaults(plugins=False)
    registry.register_type(Legacy, wrap_legacy)
    agent = registry.add("fancy", FancyLegacy("hi"), "A subclass.")
    assert isinstance(agent, FunctionAgent)
    assert agent.description == "A subclass."
    assert isinstance(registry.add("chat", ChatAgent("chat", EchoModel())), BaseAgent)


def test_each_registry_owns_its_table() -> None:
    first, second = Registry(), Registry()
    first.register_type(Legacy, wrap_legacy)
    first.add("a", Legacy("x"))
    with pytest.raises(
        RegistryError, match=r"no agent factory for type tests\.app\.test_registry\.Legacy"
    ):
        second.add("a", Legacy("x"))
    assert list(second) == []


def test_unknown_types_are_refused_naming_the_known_ones() -> None:
    registry = Registry.with_defaults(plugins=False)
    with pytest.raises(
        RegistryError, match=r"type str; known types: agenthost.agents.agent.BaseAgent, function"
    ):
        registry.add("x", "not an agent")


def test_duplicate_names_are_refused() -> None:
    registry = Registry.with_defaults(plugins=False)
    registry.add("a", ChatAgent("a", EchoModel()))
    with pytest.raises(RegistryError, match="duplicate agent name 'a'"):
        registry.add("a", ChatAgent("a", EchoModel()))


def test_an_agent_object_must_carry_its_configured_name() -> None:
    with pytest.raises(RegistryError, match="named 'b' but configured as 'a'"):
        Registry.with_defaults(plugins=False).add("a", ChatAgent("b", EchoModel()))


def test_one_record_per_agent_holds_how_the_config_serves_it(tmp_path: Any) -> None:
    from agenthost.adapters.a2a.settings import A2AAgentSpec
    from agenthost.adapters.mcp.specs import MCPAgentSpec
    from agenthost.app.build import load_agents

    config = tmp_path / "agents.yaml"
    config.write_text(
        "agents:\n"
        "  - {name: open, model: echo}\n"
        "  - name: kept\n"
        "    model: echo\n"
        "    allow: [alice]\n"
        "    expose: [openai, a2a]\n"
        "    sessions: shared\n"
        "    a2a: {reply: message}\n"
        "mcp:\n"
        "  resources: [{uri: 'docs://a', name: a, file: a.txt}]\n"
    )
    (tmp_path / "a.txt").write_text("from a file")
    _, registry = load_agents(config)
    kept = registry.served["kept"]
    assert kept.allow == frozenset({"alice"}) and kept.sessions == "shared"
    assert kept.exposed_by("a2a") and not kept.exposed_by("mcp")
    assert kept.options["a2a"] == A2AAgentSpec(reply="message")
    assert kept.options["mcp"] == MCPAgentSpec()
    assert registry.allow == {"kept": frozenset({"alice"})}
    assert registry.sessions == {"kept": "shared"}
    assert list(registry.exposed_by("mcp")) == ["open"]
    assert registry.options_for("a2a")["open"] == A2AAgentSpec()
    # A protocol's config section reaches the registry with its files read.
    (resource,) = registry.sections["mcp"].resources
    assert (resource.text, resource.file) == ("from a file", None)
