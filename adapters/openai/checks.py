"""Checks both endpoints share: what an agent cannot honour is refused, never dropped."""

from __future__ import annotations

from typing import Any

from adapters.openai.errors import OpenAIError
from agents import Agent


def refuse_client_tools(tools: list[dict[str, Any]] | None) -> None:
    if tools:
        raise OpenAIError(
            400,
            "client-side tools are not supported: the agent runs its own tools",
            param="tools",
            code="unsupported_parameter",
        )


def check_format(kind: str, agent: Agent, *, param: str) -> None:
    """A structured output format needs a model that can constrain its output."""
    if kind != "text" and not agent.supports_response_format:
        raise OpenAIError(
            400,
            f"{param} {kind!r} is not supported by agent {agent.name!r}",
            param=param,
            code="unsupported_value",
        )
