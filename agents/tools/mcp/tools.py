"""An MCP server's tools as runtime tools: same pipeline, same events as local ones.

The input schema goes to the model as the server gave it, and arguments are
checked against it (JSON Schema) before the call; the text of the result —
or its structured content when there is no text — goes back to the model;
an ``isError`` result is a tool error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from jsonschema import Draft202012Validator, ValidationError
from mcp_types import CallToolResult, TextContent, Tool

from agenthost.agents.errors import ToolError
from agenthost.agents.tools.base import BaseTool, ToolOptions
from agenthost.agents.tools.mcp.connection import MCPConnection

if TYPE_CHECKING:
    from agenthost.agents.tools.events import ToolHooks


class MCPTool(BaseTool):
    """One tool of one MCP server, maybe renamed with a prefix."""

    def __init__(
        self,
        connection: MCPConnection,
        listed: Tool,
        *,
        name: str | None = None,
        options: ToolOptions | None = None,
        hooks: Sequence[ToolHooks] = (),
    ) -> None:
        description = listed.description or listed.title or listed.name
        super().__init__(name or listed.name, description, options=options, hooks=hooks)
        self.connection = connection
        self.remote_name = listed.name
        self._schema: dict[str, Any] = dict(listed.input_schema)
        self._validator = Draft202012Validator(self._schema)

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        problems = [
            problem
            for error in self._validator.iter_errors(dict(arguments))
            for problem in _problems(error)
        ]
        if problems:
            raise ToolError(f"invalid arguments for {self.name}: {'; '.join(sorted(problems))}")
        return dict(arguments)

    async def invoke(self, arguments: dict[str, Any]) -> str:
        result = await self.connection.call(self.remote_name, arguments)
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or f"{self.name} failed")
        return text


def _problems(error: ValidationError) -> list[str]:
    """``field: what is wrong`` for one JSON Schema error (each missing field on its own)."""
    where = ".".join(str(p) for p in error.absolute_path)
    required: Any = error.validator_value
    instance: Any = error.instance
    if error.validator == "required" and isinstance(required, list):
        prefix = f"{where}." if where else ""
        return [f"{prefix}{name}: required" for name in required if name not in instance]
    return [f"{where or 'arguments'}: {error.message}"]


def result_text(result: CallToolResult) -> str:
    """What the model reads: the text parts, else the structured content as JSON."""
    texts = [part.text for part in result.content if isinstance(part, TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return orjson.dumps(result.structured_content).decode()
    # Images, audio, resources: say what came back rather than nothing.
    kinds = ", ".join(sorted({part.type for part in result.content}))
    return f"[{kinds} content]" if kinds else ""


class MCPToolset:
    """The tools an agent takes from one server: all, or a named subset, maybe prefixed.

    The tools follow the server's latest listing; those of a server that is
    down at start-up are absent until it comes up.
    """

    def __init__(
        self,
        connection: MCPConnection,
        *,
        include: Sequence[str] | None = None,
        prefix: str = "",
        options: ToolOptions | None = None,
    ) -> None:
        self.name = f"mcp:{connection.name}"
        self.connection = connection
        self.include = tuple(include) if include is not None else None
        self.prefix = prefix
        self.options = options
        self._built_from: dict[str, Tool] | None = None
        self._tools: tuple[MCPTool, ...] = ()
        if self.include:
            connection.required.update(self.include)

    def tools(self) -> Sequence[BaseTool]:
        listed = self.connection.listed
        if listed is not self._built_from:
            # Rebuilt only when the server was (re)listed; cheap otherwise.
            names = self.include if self.include is not None else tuple(listed)
            self._tools = tuple(
                MCPTool(self.connection, listed[n], name=self.prefix + n, options=self.options)
                for n in names
                if n in listed
            )
            self._built_from = listed
        return self._tools
