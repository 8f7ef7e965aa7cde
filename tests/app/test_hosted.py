"""The host builds its agents under its bounds and observers, and serves agents built
elsewhere as copies made under them, leaving the objects it was given as they were."""

from pathlib import Path

from agenthost.agents import ChatAgent
from agenthost.agents.composition import AgentTool, PipelineAgent
from agenthost.agents.hosting import UNHOSTED
from agenthost.agents.models import EchoModel
from agenthost.agents.tools import LOGGING_HOOKS
from agenthost.app.host import Host
from agenthost.app.metrics import ToolMetrics
from agenthost.app.registry import Registry
from agenthost.app.settings import Settings


def test_agents_given_are_served_as_copies_and_left_as_they_were() -> None:
    given = ChatAgent("a", EchoModel())
    host = Host(Settings(), {"a": given})
    served = host.registry["a"]
    assert isinstance(served, ChatAgent) and served is not given
    assert served.hosting is host.hosting and served.model is given.model
    assert isinstance(served.tool_hooks[-1], ToolMetrics)
    assert given.hosting is UNHOSTED and given.tool_hooks == (LOGGING_HOOKS,)
    # Another host serves the same object under its own bounds and observers.
    other = Host(Settings(), {"a": given})
    assert other.registry["a"].hosting is other.hosting is not host.hosting


def test_a_registry_given_keeps_its_records() -> None:
    registry = Registry.with_defaults(plugins=False)
    registry.add("a", ChatAgent("a", EchoModel()), allow=["alice"], expose=["openai"])
    host = Host(Settings(), registry)
    assert host.registry is not registry and host.registry["a"] is not registry["a"]
    assert host.allow == {"a": frozenset({"alice"})}
    assert list(host.registry.exposed_by("openai")) == ["a"]
    assert not host.registry.exposed_by("a2a")


def test_the_configs_agents_are_built_under_the_host(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n"
        "  - {name: helper, model: echo}\n"
        "  - {name: lead, model: echo, agents: [helper]}\n"
        "  - {name: both, kind: pipeline, steps: [helper, lead]}\n"
    )
    host = Host(Settings(config=path))
    helper, lead, both = (host.registry[n] for n in ("helper", "lead", "both"))
    assert isinstance(lead, ChatAgent) and isinstance(both, PipelineAgent)
    assert {a.hosting for a in (helper, lead, both)} == {host.hosting}  # type: ignore[attr-defined]
    (handoff,) = lead.options.tools or ()
    assert isinstance(handoff, AgentTool) and handoff.agent is helper
    assert both.steps == (helper, lead)
