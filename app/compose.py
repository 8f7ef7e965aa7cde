"""Build what a config composes: templates, memory, handoff tools, pipelines, workflows.

Agents are built in dependency order (an agent after those it hands off to
or runs as steps), so a cycle — a → b → a — is refused at start-up with the
cycle named. Every error names the agent and the field.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from agenthost.agents import Agent
from agenthost.agents.composition import (
    AgentStep,
    AgentTool,
    FunctionStep,
    PipelineAgent,
    WorkflowAgent,
)
from agenthost.agents.history import MemoryStrategy, SlidingWindow, Summarize, TokenBudget
from agenthost.agents.models import ChatModel
from agenthost.agents.prompts import PromptTemplate, TemplateProblem
from agenthost.app.compose_specs import (
    InstructionsSpec,
    SlidingWindowSpec,
    SummarizeSpec,
    TokenBudgetSpec,
)
from agenthost.app.config import ConfigError
from agenthost.app.specs import (
    AgentSpec,
    ChatAgentSpec,
    ConfigSpec,
    PipelineAgentSpec,
    WorkflowAgentSpec,
)


def import_attribute(path: str, where: str) -> Any:
    """``package.module:attribute`` → the object; ``where`` names the config field."""
    module_name, _, attribute = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}: cannot import {path!r}: {exc}") from exc
    return obj


def references(spec: AgentSpec) -> tuple[str, list[str]]:
    """The config field naming other agents, and the agents it names."""
    if isinstance(spec, ChatAgentSpec):
        return "agents", spec.agents
    if isinstance(spec, PipelineAgentSpec):
        return "steps", spec.steps
    if isinstance(spec, WorkflowAgentSpec):
        return "steps", [step.agent for step in spec.steps if step.agent]
    return "", []


def build_order(specs: Sequence[AgentSpec]) -> list[AgentSpec]:
    """The specs, each after the agents it refers to; unknown names and cycles refused."""
    by_name: dict[str, AgentSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise ConfigError(f"agent {spec.name!r}: duplicate agent name {spec.name!r}")
        by_name[spec.name] = spec
    for spec in specs:
        field, names = references(spec)
        for name in names:
            if name not in by_name:
                raise ConfigError(
                    f"agent {spec.name!r}: {field}: unknown agent {name!r}; "
                    f"agents: {', '.join(by_name)}"
                )
    ordered: list[AgentSpec] = []
    done: set[str] = set()

    def visit(spec: AgentSpec, path: tuple[str, ...]) -> None:
        if spec.name in done:
            return
        if spec.name in path:
            cycle = " -> ".join((*path[path.index(spec.name) :], spec.name))
            raise ConfigError(f"agent {spec.name!r}: agents call each other in a cycle: {cycle}")
        for name in references(spec)[1]:
            visit(by_name[name], (*path, spec.name))
        done.add(spec.name)
        ordered.append(spec)

    for spec in specs:
        visit(spec, ())
    return ordered


def build_templates(config: ConfigSpec) -> dict[str, PromptTemplate]:
    """The config's template library."""
    library: dict[str, PromptTemplate] = {}
    for name, spec in config.templates.items():
        try:
            library[name] = PromptTemplate(spec.text, spec.variables, name=name)
        except TemplateProblem as exc:
            raise ConfigError(f"templates: {name}: {exc}") from exc
    return library


def build_instructions(
    spec: ChatAgentSpec, library: Mapping[str, PromptTemplate]
) -> str | PromptTemplate | None:
    """Plain instructions, or this agent's own copy of a template with its values."""
    if not isinstance(spec.instructions, InstructionsSpec):
        return spec.instructions
    given = spec.instructions
    try:
        if given.template is not None:
            if given.template not in library:
                known = ", ".join(library) or "none"
                raise TemplateProblem(f"unknown template {given.template!r}; templates: {known}")
            template = library[given.template].customise(given.variables)
        else:
            template = PromptTemplate(given.text or "", given.variables, name=spec.name)
        template.check()
    except TemplateProblem as exc:
        raise ConfigError(f"agent {spec.name!r}: instructions: {exc}") from exc
    return template


def build_memory(
    spec: ChatAgentSpec, build_model: Callable[[ChatAgentSpec], ChatModel]
) -> MemoryStrategy | None:
    """The agent's memory strategy; None for unconstrained."""
    memory = spec.memory
    if isinstance(memory, SlidingWindowSpec):
        return SlidingWindow(memory.max_messages)
    if isinstance(memory, TokenBudgetSpec):
        return TokenBudget(memory.max_tokens, memory.threshold)
    if isinstance(memory, SummarizeSpec):
        model = None
        if memory.model is not None:
            model = build_model(spec.model_copy(update={"model": memory.model}))
        return Summarize(
            memory.max_tokens, threshold=memory.threshold, keep_last=memory.keep_last, model=model
        )
    return None


def agent_tools(spec: ChatAgentSpec, agents: Mapping[str, Agent]) -> tuple[AgentTool, ...]:
    return tuple(AgentTool(agents[name]) for name in spec.agents)


def build_pipeline(spec: PipelineAgentSpec, agents: Mapping[str, Agent]) -> PipelineAgent:
    steps = [agents[name] for name in spec.steps]
    return PipelineAgent(spec.name, steps, description=spec.description)


def build_workflow(spec: WorkflowAgentSpec, agents: Mapping[str, Agent]) -> WorkflowAgent:
    where = f"agent {spec.name!r}"
    state = import_attribute(spec.state, f"{where}: state")
    if not (inspect.isclass(state) and issubclass(state, BaseModel)):
        raise ConfigError(f"{where}: state: {spec.state!r} is not a pydantic model class")
    steps: list[AgentStep | FunctionStep] = []
    for step in spec.steps:
        if step.agent is not None:
            assert step.output is not None  # checked by the spec
            steps.append(
                AgentStep(step.name, agents[step.agent], step.output, step.input, step.next)
            )
            continue
        function = import_attribute(step.function or "", f"{where}: steps: {step.name}")
        if not callable(function):
            raise ConfigError(f"{where}: steps: {step.name}: {step.function!r} is not callable")
        steps.append(FunctionStep(step.name, function))
    try:
        return WorkflowAgent(
            spec.name,
            state,
            steps,
            input_field=spec.input,
            output_field=spec.output,
            max_steps=spec.max_steps,
            description=spec.description,
        )
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
