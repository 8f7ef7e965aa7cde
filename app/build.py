"""Build agent objects from validated specs and fill a registry with them."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agents import ChatAgent, ModelSettings
from agents.limits import RunLimits
from agents.models import ChatModel, EchoModel
from agents.tools import BUILTIN_TOOLS
from app.config import ConfigError, load_config
from app.registry import Registry, RegistryError
from app.specs import ChatAgentSpec, ConfigSpec, ImportAgentSpec, ModelSettingsSpec

PROVIDERS = ("echo", "openai:<model>", "local:<name-or-path>")


def build_model(spec: ChatAgentSpec) -> ChatModel:
    """``echo``, ``openai:<model>`` or ``local:<name-or-path>`` → a chat model."""
    provider, _, model = spec.model.partition(":")
    settings = spec.model_settings
    if provider == "echo" and not model:
        return EchoModel()
    if provider == "openai" and model:
        from agents.models.openai import OpenAIModel

        return OpenAIModel(
            model,
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )
    if provider == "local" and model:
        from agents.models.local import LocalModel

        try:
            return LocalModel(
                model,
                context_size=settings.context_size,
                parallel=settings.parallel,
                threads=settings.threads,
            )
        except FileNotFoundError as exc:
            raise ConfigError(f"agent {spec.name!r}: model: {exc}") from None
    raise ConfigError(
        f"agent {spec.name!r}: model: unknown model {spec.model!r}; "
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


def build_chat_agent(spec: ChatAgentSpec) -> ChatAgent:
    unknown = [name for name in spec.tools if name not in BUILTIN_TOOLS]
    if unknown:
        raise ConfigError(
            f"agent {spec.name!r}: tools: unknown tool {unknown[0]!r}; "
            f"built-in tools: {', '.join(sorted(BUILTIN_TOOLS))}"
        )
    agent = ChatAgent(
        spec.name,
        build_model(spec),
        description=spec.description,
        instructions=spec.instructions,
        tools=tuple(BUILTIN_TOOLS[name] for name in spec.tools),
        model_settings=to_model_settings(spec.model_settings),
        max_steps=spec.max_steps,
    )
    agent.limits = RunLimits(spec.limits.max_output_chars, spec.limits.max_seconds)
    return agent


def import_object(spec: ImportAgentSpec) -> Any:
    module_name, _, attribute = spec.import_.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"agent {spec.name!r}: import: cannot import {spec.import_!r}: {exc}"
        ) from exc
    return obj


def build_registry(config: ConfigSpec, registry: Registry | None = None) -> Registry:
    """Build every configured agent and add it; the first problem stops start-up."""
    registry = registry if registry is not None else Registry.with_defaults()
    for spec in config.agents:
        obj = build_chat_agent(spec) if isinstance(spec, ChatAgentSpec) else import_object(spec)
        try:
            registry.add(spec.name, obj, spec.description, allow=spec.allow, expose=spec.expose)
        except RegistryError as exc:
            raise ConfigError(f"agent {spec.name!r}: {exc}") from exc
    return registry


def load_agents(path: Path) -> tuple[ConfigSpec, Registry]:
    """Load a config file and build its agents; every error names the file."""
    config = load_config(path)
    try:
        return config, build_registry(config)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc.__cause__
