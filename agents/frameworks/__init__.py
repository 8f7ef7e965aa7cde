"""Agents written with other frameworks, served like any other.

Each framework's wrapper is an optional extra, registered with the app's
registry through the ``agenthost.factories`` entry points (see
``pyproject.toml``): the registry maps the framework's agent type to a
factory, and no adapter ever learns that the framework exists.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from typing import Any, Protocol


class TypeRegistry(Protocol):
    """The part of the app's registry a framework needs."""

    def register_type(self, kind: type, factory: Any) -> None: ...


def register_pydantic_ai(registry: TypeRegistry) -> None:
    """Serve ``pydantic_ai.Agent`` objects, when the ``pydantic-ai`` extra is installed."""
    if importlib.util.find_spec("pydantic_ai") is None:
        return
    from agenthost.agents.frameworks.pydantic_ai import register

    register(registry)


def register_langgraph(registry: TypeRegistry) -> None:
    """Serve LangGraph's compiled graphs, when the ``langgraph`` extra is installed."""
    if importlib.util.find_spec("langgraph") is None:
        return
    from agenthost.agents.frameworks.langgraph import register

    register(registry)


def register_openai_agents(registry: TypeRegistry) -> None:
    """Serve the OpenAI Agents SDK's ``Agent``, when the ``openai-agents`` extra is installed.

    Looked up by distribution, not by the import name ``agents`` the SDK owns.
    """
    try:
        importlib.metadata.version("openai-agents")
    except importlib.metadata.PackageNotFoundError:
        return
    from agenthost.agents.frameworks.openai_agents import register

    register(registry)


def register_adk(registry: TypeRegistry) -> None:
    """Serve Google ADK agents (``google.adk.agents.BaseAgent``), with the ``adk`` extra."""
    try:
        importlib.metadata.version("google-adk")
    except importlib.metadata.PackageNotFoundError:
        return
    from agenthost.agents.frameworks.adk import register

    register(registry)


def register_crewai(registry: TypeRegistry) -> None:
    """Serve CrewAI's ``Crew`` and ``Agent``, when CrewAI is installed (no extra: see crewai.py)."""
    if importlib.util.find_spec("crewai") is None:
        return
    from agenthost.agents.frameworks.crewai import register

    register(registry)


def register_beeai(registry: TypeRegistry) -> None:
    """Serve BeeAI Framework agents (``BaseAgent``), when the ``beeai`` extra is installed."""
    if importlib.util.find_spec("beeai_framework") is None:
        return
    from agenthost.agents.frameworks.beeai import register

    register(registry)


def register_agent_framework(registry: TypeRegistry) -> None:
    """Serve Microsoft Agent Framework agents, when the ``agent-framework`` extra is installed."""
    if importlib.util.find_spec("agent_framework") is None:
        return
    from agenthost.agents.frameworks.agent_framework import register

    register(registry)
