"""Checks and option mapping both endpoints share.

What an agent cannot honour is refused with a 400 naming the param, never
dropped. Client tools become :class:`~agents.ClientTool` s: the model sees
them beside the agent's own tools, and a call of one ends the run waiting
for the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthost.adapters.openai.errors import OpenAIError
from agenthost.agents import Agent, ClientTool

RESPONSE_FORMATS = ("text", "json_object", "json_schema")
TOOL_CHOICES = ("auto", "none", "required")


def check_format(kind: str, agent: Agent, *, param: str) -> None:
    """A known format type, and a model that can constrain its output for a structured one."""
    if kind not in RESPONSE_FORMATS:
        raise OpenAIError(
            400,
            f"{param}.type must be one of {', '.join(RESPONSE_FORMATS)}; got {kind!r}",
            param=f"{param}.type",
            code="invalid_value",
        )
    if kind != "text" and not agent.supports_response_format:
        raise OpenAIError(
            400,
            f"{param} {kind!r} is not supported by agent {agent.name!r}",
            param=param,
            code="unsupported_value",
        )


def client_tool(
    type: str, name: str | None, description: str | None, parameters: Any, *, param: str
) -> ClientTool:
    """One client-declared function tool; other tool types are not served."""
    if type != "function" or not name:
        raise OpenAIError(
            400,
            f"tools of type {type!r} are not supported; only function tools are",
            param=f"{param}.type",
            code="unsupported_value",
        )
    schema = parameters if parameters is not None else {"type": "object", "properties": {}}
    return ClientTool(name, description or "", schema)


def tool_choice(value: str | dict[str, Any] | None, tools: Sequence[ClientTool]) -> str | None:
    """``tool_choice`` as the runtime's ``ModelSettings.tool_choice`` (a mode or a tool name).

    Chat Completions names a function as ``{"type": "function", "function":
    {"name": ...}}``, the Responses API as ``{"type": "function", "name": ...}``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if value not in TOOL_CHOICES:
            raise OpenAIError(
                400,
                f"tool_choice must be one of {', '.join(TOOL_CHOICES)} or a function; "
                f"got {value!r}",
                param="tool_choice",
                code="invalid_value",
            )
        if value == "required" and not tools:
            raise OpenAIError(
                400, "tool_choice 'required' needs tools", param="tool_choice", code="invalid_value"
            )
        return value
    function = value.get("function")
    name = function.get("name") if isinstance(function, dict) else value.get("name")
    if value.get("type") != "function" or not isinstance(name, str):
        raise OpenAIError(
            400,
            "tool_choice must name a function: only function tools are supported",
            param="tool_choice",
            code="unsupported_value",
        )
    if name not in {t.name for t in tools}:
        raise OpenAIError(
            400,
            f"tool_choice names {name!r}, which is not one of the request's tools",
            param="tool_choice",
            code="invalid_value",
        )
    return name


def refuse(param: str, what: str) -> OpenAIError:
    """A 400 for a parameter this server does not honour."""
    return OpenAIError(400, f"{what} not supported", param=param, code="unsupported_parameter")
