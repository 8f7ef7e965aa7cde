"""What an agent's MCP tool takes: the default ``{message, session_id}``, or typed arguments.

An agent whose config has ``mcp: {input_schema: ...}`` is a tool with that
input schema (kept as written: ``$schema``, ``$defs``, composition keywords
and all). A call's arguments are validated against it (JSON Schema, the
dialect its ``$schema`` names, 2020-12 by default) and reach the agent as
the user message: the text of the ``message`` template with ``{name}``
replaced by each argument, or else one data part holding the arguments
(code agents read it; chat models see it as JSON). A ``session_id`` argument,
when the schema declares one, still names the conversation and is not
passed on. ``task_support`` says whether the tool runs as an MCP task, ``task_after``
how long its run goes on in the call before it becomes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as types
import orjson
from mcp.shared.exceptions import MCPError

from agenthost.adapters.mcp import convert
from agenthost.adapters.mcp.declared import substitute
from agenthost.adapters.mcp.specs import check_input_schema
from agenthost.agents import DataPart, Message, MessageInput

TaskSupport = Literal["optional", "required", "forbidden"]


@dataclass(frozen=True, slots=True)
class Parsed:
    """A call's input for the agent and the conversation it continues (None: a new one)."""

    input: MessageInput
    session_id: str | None


@dataclass(frozen=True, slots=True)
class ToolInput:
    """The arguments of one agent's tool."""

    schema: Mapping[str, Any] | None = None
    message: str | None = None
    task_support: TaskSupport = "optional"
    task_after: float = 0.0
    """Seconds a task's run goes on in its call first (ended or asking by then: no task)."""

    @classmethod
    def of(cls, spec: Mapping[str, Any] | None) -> ToolInput:
        if not spec:
            return cls()
        schema = spec.get("input_schema")
        if schema is not None:
            check_input_schema(schema)
        return cls(
            schema,
            spec.get("message"),
            spec.get("task_support", "optional"),
            float(spec.get("task_after") or 0.0),
        )

    @property
    def input_schema(self) -> dict[str, Any]:
        return dict(self.schema) if self.schema is not None else convert.INPUT_SCHEMA

    def parse(self, arguments: Mapping[str, Any] | None) -> Parsed:
        """The validated arguments as the agent's input, or the invalid-params error."""
        if self.schema is None:
            default = convert.parse_arguments(arguments)
            return Parsed(default.message, default.session_id)
        from jsonschema import validators

        given = dict(arguments or {})
        validator = validators.validator_for(self.schema)(self.schema)
        error = next(iter(sorted(validator.iter_errors(given), key=lambda e: e.path)), None)
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path) or "arguments"
            raise MCPError(types.INVALID_PARAMS, f"invalid arguments: {where}: {error.message}")
        session_id = given.pop("session_id", None) if self._has("session_id") else None
        if session_id is not None and not isinstance(session_id, str):
            raise MCPError(types.INVALID_PARAMS, "invalid arguments: session_id: not a string")
        if self.message is not None:
            values = {k: v if isinstance(v, str) else _json(v) for k, v in given.items()}
            return Parsed(substitute(self.message, values), session_id or None)
        return Parsed(Message(role="user", parts=[DataPart(data=given)]), session_id or None)

    def _has(self, name: str) -> bool:
        properties = (self.schema or {}).get("properties")
        return isinstance(properties, Mapping) and name in properties


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def tool_inputs(config: Mapping[str, Any]) -> dict[str, ToolInput]:
    """Agent name → its tool's input, for the agents whose config has ``mcp:`` options."""
    return {name: ToolInput.of(spec) for name, spec in (config.get("tools") or {}).items()}
