"""Build agent objects from validated specs and fill a registry with them."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthost.adapters.base import ReadsFiles
from agenthost.agents import Agent, ChatAgent, ModelSettings, UserError
from agenthost.agents.agent import serving
from agenthost.agents.hosting import Hosting
from agenthost.agents.limits import RunLimits
from agenthost.agents.models import ChatModel, EchoModel
from agenthost.agents.prompts import PromptTemplate
from agenthost.agents.skills import Skill
from agenthost.app import compose
from agenthost.app.config import ConfigError, closest, load_config
from agenthost.app.imports import import_path
from agenthost.app.registry import Registry, RegistryError
from agenthost.app.specs import (
    AgentSpec,
    ChatAgentSpec,
    ConfigSpec,
    ImportAgentSpec,
    ModelSettingsSpec,
    PipelineAgentSpec,
    SkillSpec,
    WorkflowAgentSpec,
    config_sections,
    protocol_options,
)
from agenthost.app.tool_build import Tooling

PROVIDERS = ("echo", "openai:<model>", "local:<name-or-path>", "mcp:sampling", "agentstack")


def build_model(spec: ChatAgentSpec) -> ChatModel:
    """``echo``, ``openai:<model>`` or ``local:<name-or-path>`` → a chat model."""
    provider, _, model = spec.model.partition(":")
    settings = spec.model_settings
    if provider == "echo" and not model:
        return EchoModel()
    if spec.model == "mcp:sampling":  # the MCP client's own model (agents/models/sampling.py)
        from agenthost.agents.models.sampling import SamplingModel

        return SamplingModel()
    if (
        spec.model == "agentstack"
    ):  # the model Agent Stack provides per request (models/provided.py)
        from agenthost.agents.models.provided import ProvidedModel

        return ProvidedModel()
    if provider == "openai" and model:
        from agenthost.agents.models.openai import OpenAIModel

        return OpenAIModel(
            model,
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )
    if provider == "local" and model:
        from agenthost.agents.models.local import LocalModel

        try:
            return LocalModel(
                model,
                context_size=settings.context_size,
                parallel=settings.parallel,
                threads=settings.threads,
            )
        except FileNotFoundError as exc:
            raise ConfigError(f"agent {spec.name!r}: model: {exc}") from None
    # By the provider part: "ecoh" meant echo, "opneai:gpt-4o" openai:<model>.
    providers = {p.split(":")[0]: p for p in PROVIDERS}
    meant = closest(spec.model.split(":")[0], providers)
    hint = f" (did you mean {providers[meant]!r}?)" if meant else ""
    raise ConfigError(
        f"agent {spec.name!r}: model: unknown model {spec.model!r}{hint}; "
        f"use one of {', '.join(PROVIDERS)}"
    )


def to_model_settings(spec: ModelSettingsSpec) -> ModelSettings:
    return ModelSettings(
        temperature=spec.temperature,
        top_p=spec.top_p,
        max_tokens=spec.max_tokens,
        seed=spec.seed,
        frequency_penalty=spec.frequency_penalty,
        presence_penalty=spec.presence_penalty,
        stop=tuple(spec.stop) if spec.stop else None,
    )


def build_chat_agent(
    spec: ChatAgentSpec,
    agents: Mapping[str, Agent] | None = None,
    templates: Mapping[str, PromptTemplate] | None = None,
    tooling: Tooling | None = None,
    hosting: Hosting | None = None,
) -> ChatAgent:
    """A chat agent; ``agents`` are the ones built before it (for handoff); ``hosting``
    the bounds and observers of the host that will serve it."""
    tools, toolsets = (tooling or Tooling()).build(spec.name, spec.tools)
    try:
        agent = ChatAgent(
            spec.name,
            build_model(spec),
            description=spec.description,
            instructions=compose.build_instructions(spec, templates or {}),
            tools=(*tools, *compose.agent_tools(spec, agents or {})),
            toolsets=toolsets,
            model_settings=to_model_settings(spec.model_settings),
            max_steps=spec.max_steps,
            memory=compose.build_memory(spec, build_model),
            limits=RunLimits(spec.limits.max_output_chars, spec.limits.max_seconds),
            hosting=hosting,
        )
    except UserError as exc:  # two tools of one name (an agent named like a built-in tool)
        raise ConfigError(f"agent {spec.name!r}: {exc}") from exc
    return agent


def import_object(spec: ImportAgentSpec, base_dir: Path | None = None) -> Any:
    try:
        return import_path(spec.import_, base_dir)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"agent {spec.name!r}: import: cannot import {spec.import_!r}: {exc}"
        ) from exc


def build_agent(
    spec: AgentSpec,
    agents: Mapping[str, Agent],
    templates: Mapping[str, PromptTemplate],
    tooling: Tooling,
    base_dir: Path | None = None,
    hosting: Hosting | None = None,
) -> Any:
    """The object for one spec (the registry wraps it into an agent)."""
    if isinstance(spec, ChatAgentSpec):
        return build_chat_agent(spec, agents, templates, tooling, hosting)
    if isinstance(spec, PipelineAgentSpec):
        return compose.build_pipeline(spec, agents)
    if isinstance(spec, WorkflowAgentSpec):
        return compose.build_workflow(spec, agents)
    return import_object(spec, base_dir)


def build_registry(
    config: ConfigSpec,
    registry: Registry | None = None,
    *,
    base_dir: Path | None = None,
    hosting: Hosting | None = None,
) -> Registry:
    """Build every configured agent and add it; the first problem stops start-up.

    ``base_dir`` (the config file's directory) is searched too for import
    paths (agents' and tools'). Chat agents are built under ``hosting``
    (the serving host's bounds and observers); :func:`hosted` serves the rest.
    """
    registry = registry if registry is not None else Registry.with_defaults()
    tooling = Tooling(config.mcp_servers, base_dir)
    if (servers := tooling.servers()) is not None:
        registry.resources.append(servers)
    templates = compose.build_templates(config)
    for spec in compose.build_order(config.agents):
        obj = build_agent(spec, registry, templates, tooling, base_dir, hosting)
        try:
            registry.add(
                spec.name,
                obj,
                spec.description,
                allow=spec.allow,
                expose=spec.expose,
                skills=to_skills(spec.skills),
                sessions=spec.sessions,
                durable=spec.durable,
                options=protocol_options(spec),
            )
        except RegistryError as exc:
            raise ConfigError(f"agent {spec.name!r}: {exc}") from exc
    for protocol, section in config_sections(config).items():
        try:
            # A section naming files (MCP resources) has them read now: a missing one
            # stops start-up (and `agenthost check`), not the first request.
            registry.sections[protocol] = (
                section.read_files(base_dir) if isinstance(section, ReadsFiles) else section
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{protocol}: {exc}") from exc
    return registry


def to_skills(specs: list[SkillSpec] | None) -> list[Skill] | None:
    if specs is None:
        return None
    return [
        Skill(s.id, s.name or s.id, s.description, tuple(s.tags), tuple(s.examples)) for s in specs
    ]


def load_agents(path: Path, hosting: Hosting | None = None) -> tuple[ConfigSpec, Registry]:
    """Load a config file and build its agents (under ``hosting``, the serving host's
    bounds and observers, if given); every error names the file.

    Python modules next to the config file can be imported by it (``import:``,
    a workflow's ``state`` and ``function`` steps), like ``uvicorn --app-dir``.
    """
    config = load_config(path)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.append(folder)  # after installed packages: a local file never shadows one
    try:
        return config, build_registry(config, base_dir=path.parent, hosting=hosting)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc.__cause__


def hosted(agents: Mapping[str, Agent], hosting: Hosting) -> Registry:
    """``agents`` as a host serves them under ``hosting``: those built under it as they
    are, the others (built by a script, a test, a framework's factory) as served copies
    (:meth:`~agenthost.agents.agent.BaseAgent.served`), each agent they compose served
    too. The objects given are left as they were."""
    serve = serving(hosting)
    served = {name: serve(agent) for name, agent in agents.items()}
    if isinstance(agents, Registry):
        if all(served[name] is agent for name, agent in agents.items()):
            return agents
        return agents.with_agents(served)
    return Registry.of(served)
