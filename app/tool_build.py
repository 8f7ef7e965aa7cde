"""Build agents' tools from their specs, and the shared MCP server connections.

Every problem is a :class:`~app.config.ConfigError` naming the agent and the
field (``tools.2: ...``); :func:`app.build.load_agents` adds the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agenthost.agents.options import AnyTool
from agenthost.agents.tools import BUILTIN_TOOLS, BaseTool, CacheOptions, ClientTool, Tool, Toolset
from agenthost.agents.tools import ToolOptions as RuntimeToolOptions
from agenthost.app.config import ConfigError, closest
from agenthost.app.imports import import_path
from agenthost.app.tool_specs import (
    HTTPGetToolSpec,
    HTTPServerSpec,
    MCPServerSpec,
    MCPToolsSpec,
    ToolEntry,
    ToolOptionsSpec,
    ToolSpec,
)

if TYPE_CHECKING:
    from agenthost.agents.tools.mcp import MCPConnection, MCPServers


def to_tool_options(spec: ToolOptionsSpec) -> RuntimeToolOptions:
    cache = spec.cache
    return RuntimeToolOptions(
        retries=spec.retries,
        backoff=spec.backoff,
        timeout=spec.timeout,
        approval=spec.approval == "required",
        cache=(
            CacheOptions(cache.max_entries, cache.ttl)
            if not isinstance(cache, bool)
            else CacheOptions()
            if cache
            else None
        ),
    )


class Tooling:
    """What building agents' tools needs: the MCP servers and the config's directory."""

    def __init__(
        self, servers: dict[str, MCPServerSpec] | None = None, base_dir: Path | None = None
    ) -> None:
        self.base_dir = base_dir
        self.connections: dict[str, MCPConnection] = {}
        if servers:
            self.connections = {name: _connection(name, s, base_dir) for name, s in servers.items()}

    def servers(self) -> MCPServers | None:
        """The connections as one resource for the app's lifespan (None without servers)."""
        if not self.connections:
            return None
        from agenthost.agents.tools.mcp import MCPServers

        return MCPServers(list(self.connections.values()))

    def build(
        self, agent: str, entries: Sequence[ToolEntry]
    ) -> tuple[tuple[AnyTool, ...], tuple[Toolset, ...]]:
        """An agent's own tools and its toolsets (MCP servers)."""
        tools: list[AnyTool] = []
        toolsets: list[Toolset] = []
        names: list[str] = []
        for index, entry in enumerate(entries):
            where = f"agent {agent!r}: tools.{index}"
            if isinstance(entry, MCPToolsSpec):
                toolset = self._toolset(where, entry)
                toolsets.append(toolset)
                names.extend(entry.prefix + name for name in entry.tools or ())
            else:
                tool = self._tool(where, entry)
                tools.append(tool)
                names.append(tool.name)
        clash = next((name for name in names if names.count(name) > 1), None)
        if clash is not None:
            raise ConfigError(
                f"agent {agent!r}: tools: two tools are named {clash!r}; "
                "use an MCP prefix or a subset to tell them apart"
            )
        return tuple(tools), tuple(toolsets)

    def _tool(self, where: str, entry: str | ToolSpec | HTTPGetToolSpec) -> AnyTool:
        if isinstance(entry, HTTPGetToolSpec):
            return _http_get(where, entry)
        reference = entry if isinstance(entry, str) else entry.tool
        options = None if isinstance(entry, str) else to_tool_options(entry)
        if reference == "http_get":
            raise ConfigError(
                f"{where}: http_get needs allowed hosts: "
                "write {tool: http_get, allowed_hosts: [example.com]}"
            )
        process = isinstance(entry, ToolSpec) and entry.process
        if ":" in reference:
            tool = self._imported(where, reference, process=process)
        elif process:
            raise ConfigError(f"{where}: process: true is for Python functions, not {reference}")
        elif reference in BUILTIN_TOOLS:
            tool = BUILTIN_TOOLS[reference]
        else:
            builtins = sorted([*BUILTIN_TOOLS, "http_get"])
            meant = closest(reference, builtins)
            raise ConfigError(
                f"{where}: unknown tool {reference!r}"
                + (f" (did you mean {meant!r}?)" if meant else "")
                + f"; built-in tools: {', '.join(builtins)}; "
                "or an import path package.module:function"
            )
        if options is None:
            return tool
        if isinstance(tool, ClientTool):
            raise ConfigError(
                f"{where}: {tool.name} is answered by the client: it takes no options"
            )
        return tool.with_options(options)

    def _imported(self, where: str, path: str, *, process: bool = False) -> BaseTool | ClientTool:
        try:
            obj = import_path(path, self.base_dir)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{where}: cannot import {path!r}: {exc}") from exc
        if process and isinstance(obj, Tool):  # made again, to run in a worker process
            try:
                return Tool(obj.function, name=obj.name, description=obj.description, process=True)
            except TypeError as exc:
                raise ConfigError(f"{where}: {path!r}: {exc}") from exc
        if isinstance(obj, BaseTool | ClientTool):
            if process:
                raise ConfigError(f"{where}: process: true is for Python functions")
            return obj
        if not callable(obj):
            raise ConfigError(f"{where}: {path!r} is neither a function nor a tool")
        try:
            return Tool(obj, process=process)
        except (TypeError, NameError) as exc:
            raise ConfigError(f"{where}: {path!r}: {exc}") from exc

    def _toolset(self, where: str, entry: MCPToolsSpec) -> Toolset:
        connection = self.connections.get(entry.mcp)
        if connection is None:
            known = ", ".join(sorted(self.connections)) or "none"
            raise ConfigError(
                f"{where}.mcp: unknown MCP server {entry.mcp!r}; mcp_servers: {known}"
            )
        from agenthost.agents.tools.mcp import MCPToolset

        return MCPToolset(
            connection, include=entry.tools, prefix=entry.prefix, options=to_tool_options(entry)
        )


def _http_get(where: str, spec: HTTPGetToolSpec) -> BaseTool:
    try:
        from agenthost.agents.tools.http import HTTPGetTool

        return HTTPGetTool(
            spec.allowed_hosts,
            max_bytes=spec.max_bytes,
            max_redirects=spec.max_redirects,
            options=to_tool_options(spec),
        )
    except ImportError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"{where}.allowed_hosts: {exc}") from exc


def _connection(name: str, spec: MCPServerSpec, base_dir: Path | None) -> MCPConnection:
    try:
        from agenthost.agents.tools.mcp import HTTPServer, MCPConnection, StdioServer
    except ImportError as exc:
        raise ConfigError(f"mcp_servers.{name}: {exc}") from exc
    server: HTTPServer | StdioServer
    if isinstance(spec, HTTPServerSpec):
        headers = {key: value.get_secret_value() for key, value in spec.headers.items()}
        server = HTTPServer(spec.url, headers)
    else:
        env = {key: value.get_secret_value() for key, value in spec.env.items()}
        cwd = spec.cwd
        if cwd is not None and base_dir is not None:
            cwd = str((base_dir / cwd).resolve())
        server = StdioServer(spec.command, tuple(spec.args), env, cwd)
    return MCPConnection(name, server, optional=spec.optional, connect_timeout=spec.connect_timeout)
