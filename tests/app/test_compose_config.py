"""Config for memory, handoff, templates, pipelines and workflows: built or refused at start-up."""

import itertools
import textwrap
from pathlib import Path

import pytest

from agenthost.agents import ChatAgent, FunctionAgent, TextDelta
from agenthost.agents.composition import AgentTool, PipelineAgent, WorkflowAgent
from agenthost.agents.history import SlidingWindow, Summarize, TokenBudget
from agenthost.agents.models import EchoModel
from agenthost.agents.prompts import PromptTemplate
from agenthost.app.build import load_agents
from agenthost.app.config import ConfigError
from agenthost.app.registry import Registry

pytestmark = pytest.mark.anyio

_modules = itertools.count()


def load(tmp_path: Path, text: str) -> Registry:
    path = tmp_path / "agents.yaml"
    path.write_text(textwrap.dedent(text))
    return load_agents(path)[1]


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value)


def test_a_cycle_of_agents_is_refused_at_start_up(tmp_path: Path) -> None:
    message = refused(
        tmp_path,
        """
        agents:
          - {name: a, model: echo, agents: [b]}
          - {name: b, kind: pipeline, steps: [c]}
          - {name: c, model: echo, agents: [a]}
        """,
    )
    assert "agents call each other in a cycle: a -> b -> c -> a" in message
    assert "agents.yaml" in message


def test_an_unknown_agent_is_named(tmp_path: Path) -> None:
    message = refused(tmp_path, "agents:\n  - {name: a, model: echo, agents: [ghost]}\n")
    assert "agent 'a': agents: unknown agent 'ghost'; agents: a" in message


def test_handoff_agents_are_built_first_and_become_tools(tmp_path: Path) -> None:
    registry = load(
        tmp_path,
        """
        agents:
          - {name: lead, model: echo, agents: [helper.v2], tools: [calculator]}
          - {name: helper.v2, model: echo, description: Helps.}
        """,
    )
    lead = registry["lead"]
    assert isinstance(lead, ChatAgent)
    tools = {t.name: t for t in lead.options.tools or ()}
    assert set(tools) == {"calculator", "helper_v2"}
    handoff = tools["helper_v2"]
    assert isinstance(handoff, AgentTool) and handoff.agent is registry["helper.v2"]
    assert handoff.description == "Helps."


def test_memory_strategies_are_built(tmp_path: Path) -> None:
    registry = load(
        tmp_path,
        """
        agents:
          - {name: all, model: echo, memory: unconstrained}
          - {name: window, model: echo, memory: {strategy: sliding_window, max_messages: 4}}
          - name: budget
            model: echo
            memory: {strategy: token_budget, max_tokens: 1000, threshold: 0.5}
          - name: summary
            model: echo
            memory: {strategy: summarize, max_tokens: 2000, keep_last: 3, model: echo}
        """,
    )
    memories = {name: registry[name].memory for name in registry}  # type: ignore[attr-defined]
    assert memories["all"] is None
    assert isinstance(memories["window"], SlidingWindow) and memories["window"].max_messages == 4
    assert isinstance(memories["budget"], TokenBudget) and memories["budget"].budget == 500
    summary = memories["summary"]
    assert isinstance(summary, Summarize) and isinstance(summary.model, EchoModel)
    assert summary.keep_last == 3


def test_a_memory_without_its_budget_is_refused(tmp_path: Path) -> None:
    message = refused(tmp_path, "agents:\n  - {name: a, model: echo, memory: token_budget}\n")
    assert "agent 'a': memory.token_budget.max_tokens: Field required" in message


def test_templates_are_filled_per_agent_and_copied(tmp_path: Path) -> None:
    registry = load(
        tmp_path,
        """
        templates:
          support:
            text: "{{ agent }} supports {{ product }} in a {{ tone }} tone."
            variables: {product: null, tone: calm}
        agents:
          - name: acme
            model: echo
            instructions: {template: support, variables: {product: Acme}}
          - name: globex
            model: echo
            instructions: {template: support, variables: {product: Globex, tone: brisk}}
          - name: inline
            model: echo
            instructions: {text: "Hello from {{ place }}.", variables: {place: Lyon}}
        """,
    )
    rendered = {}
    for name in ("acme", "globex", "inline"):
        template = registry[name].template  # type: ignore[attr-defined]
        assert isinstance(template, PromptTemplate)
        rendered[name] = template.render(agent=name, tools=[])
    assert rendered == {
        "acme": "acme supports Acme in a calm tone.",
        "globex": "globex supports Globex in a brisk tone.",
        "inline": "Hello from Lyon.",
    }


def test_a_missing_template_variable_is_refused_at_start_up(tmp_path: Path) -> None:
    message = refused(
        tmp_path,
        """
        templates:
          support: {text: "For {{ product }}.", variables: {product: null}}
        agents:
          - {name: a, model: echo, instructions: {template: support}}
        """,
    )
    assert "agent 'a': instructions: template 'support': no value for product" in message
    message = refused(
        tmp_path,
        "agents:\n  - {name: a, model: echo, instructions: {template: nope}}\n",
    )
    assert "unknown template 'nope'; templates: none" in message


def write_module(tmp_path: Path, source: str) -> str:
    name = f"workflow_steps_{next(_modules)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    return name


STEPS = """
    from pydantic import BaseModel

    class Story(BaseModel):
        input: str
        draft: str = ""
        output: str = ""

    def finish(state):
        state.output = state.draft + "."
        return "END"

    not_a_model = 3
"""


async def test_a_workflow_from_modules_next_to_the_config(tmp_path: Path) -> None:
    module = write_module(tmp_path, STEPS)
    registry = load(
        tmp_path,
        f"""
        agents:
          - {{name: writer, model: echo}}
          - name: story
            kind: workflow
            state: {module}:Story
            steps:
              - {{name: write, agent: writer, output: draft}}
              - {{name: finish, function: {module}:finish}}
          - {{name: both, kind: pipeline, steps: [story, writer]}}
        """,
    )
    story = registry["story"]
    assert isinstance(story, WorkflowAgent) and isinstance(registry["both"], PipelineAgent)
    result = await story.run("once upon a time")
    assert result.output == "once upon a time."
    assert [s["step"] for s in result.metadata["workflow"]["steps"]] == ["write", "finish"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            "state: {m}:not_a_model\n    steps: [{{name: a, function: {m}:finish}}]",
            "not a pydantic",
        ),
        ("state: {m}:Story\n    steps: [{{name: a, function: {m}:missing}}]", "cannot import"),
        ("state: {m}:Story\n    steps: [{{name: a, agent: ghost, output: draft}}]", "unknown"),
        ("state: {m}:Story\n    steps: [{{name: a, agent: e, output: nope}}]", "no field nope"),
        ("state: {m}:Story\n    steps: [{{name: a, agent: e}}]", "needs output"),
    ],
)
def test_workflow_mistakes_are_refused_at_start_up(
    tmp_path: Path, fields: str, expected: str
) -> None:
    module = write_module(tmp_path, STEPS)
    text = "agents:\n  - {name: e, model: echo}\n  - name: w\n    kind: workflow\n    "
    assert expected in refused(tmp_path, text + fields.format(m=module) + "\n")


async def test_an_async_generator_function_streams(tmp_path: Path) -> None:
    registry = load(
        tmp_path, "agents:\n  - {name: words, import: tests.app.sample_agents:stream_words}\n"
    )
    agent = registry["words"]
    assert isinstance(agent, FunctionAgent)
    updates = [u async for u in agent.run_stream("one two three")]
    assert [u.text for u in updates if isinstance(u, TextDelta)] == ["one ", "two ", "three "]
