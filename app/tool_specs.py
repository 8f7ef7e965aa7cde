"""Config specs of agents' tools and of the MCP servers they come from.

A tool entry in an agent's ``tools`` list is one of:

- a name: a built-in (``calculator``) or an import path (``package.module:function``);
- ``{tool: NAME, retries, backoff, timeout, cache}``: the same with options;
- ``{tool: http_get, allowed_hosts: [...], max_bytes, max_redirects, ...}``;
- ``{mcp: SERVER, tools: [...], prefix: ..., retries, timeout, cache}``: tools
  of an MCP server declared under ``mcp_servers`` (all of them unless ``tools``
  names a subset).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SecretStr, StringConstraints, Tag

TOOL_REFERENCE = r"^([A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)$"
TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"
SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CacheSpec(_Spec):
    """A bounded cache of a tool's results (least recently used out first)."""

    max_entries: int = Field(256, ge=1, le=1_000_000, description="Results kept, at most.")
    ttl: float = Field(300.0, gt=0, description="Seconds a result is kept.")


class ToolOptionsSpec(_Spec):
    """How every call of the tool runs."""

    retries: int = Field(0, ge=0, le=10, description="Extra attempts after a failure.")
    backoff: float = Field(
        0.5, ge=0, le=60, description="Seconds before the first retry; doubles for each next one."
    )
    timeout: float | None = Field(None, gt=0, description="Seconds per attempt.")
    cache: Annotated[
        Annotated[bool, Tag("switch")] | Annotated[CacheSpec, Tag("settings")],
        Discriminator(lambda value: "switch" if isinstance(value, bool) else "settings"),
    ] = Field(
        False, description="Cache results by input: true (256 entries, 5 minutes) or options."
    )
    approval: Literal["required", "never"] = Field(
        "never",
        description="'required': each call waits for the user's approval, asked over the "
        "protocol's own way to ask (A2A input-required, ACP awaiting, MCP elicitation...); "
        "declined, the call never runs and the model is told. Only conversations with a "
        "session can ask: elsewhere (stateless Chat Completions) the call is refused.",
    )


class ToolSpec(ToolOptionsSpec):
    """A built-in tool or a Python function, with options."""

    tool: str = Field(
        pattern=TOOL_REFERENCE,
        description="A built-in name (think, calculator, current_time, ask_user) "
        "or an import path package.module:function.",
    )
    process: bool = Field(
        False,
        description="Run the (sync, module-level) function in a worker process, not a thread: "
        "for CPU-bound tools, which would otherwise hold the server while they compute.",
    )


class HTTPGetToolSpec(ToolOptionsSpec):
    """The http_get built-in: off unless hosts are allowed."""

    tool: Literal["http_get"]
    allowed_hosts: list[str] = Field(
        min_length=1,
        description="Host names, *.domain wildcards, IP addresses or networks. Private and "
        "loopback addresses are refused unless their address or network is listed too.",
    )
    max_bytes: int = Field(1_000_000, gt=0, description="Largest body returned, in bytes.")
    max_redirects: int = Field(5, ge=0, le=20)
    timeout: float | None = Field(20.0, gt=0, description="Seconds per attempt.")


class MCPToolsSpec(ToolOptionsSpec):
    """Tools of an MCP server declared under ``mcp_servers``."""

    mcp: str = Field(pattern=SERVER_NAME, description="The server's name under mcp_servers.")
    tools: list[Annotated[str, StringConstraints(min_length=1)]] | None = Field(
        None, min_length=1, description="The tools to take (all when unset)."
    )
    prefix: str = Field(
        "", pattern=r"^[A-Za-z0-9_-]{0,32}$", description="Prepended to each tool's name."
    )
    # A server that hangs must not hang the run: bounded unless the config says otherwise.
    timeout: float | None = Field(60.0, gt=0, description="Seconds per attempt.")


TOOL_TAGS = ("name", "options", "http_get", "mcp")


def _tool_kind(value: Any) -> str:
    if isinstance(value, str):
        return "name"
    if isinstance(value, dict):
        mcp, tool = value.get("mcp"), value.get("tool")
    else:
        mcp, tool = getattr(value, "mcp", None), getattr(value, "tool", None)
    if mcp is not None:
        return "mcp"
    return "http_get" if tool == "http_get" else "options"


ToolEntry = Annotated[
    Annotated[Annotated[str, StringConstraints(pattern=TOOL_REFERENCE)], Tag("name")]
    | Annotated[ToolSpec, Tag("options")]
    | Annotated[HTTPGetToolSpec, Tag("http_get")]
    | Annotated[MCPToolsSpec, Tag("mcp")],
    Discriminator(_tool_kind),
]

ToolsField: Any = Field(
    default_factory=list,
    description="Tools: built-in names (think, calculator, current_time, ask_user), import "
    "paths (package.module:function), or mappings with options ({tool: ...}, "
    "{tool: http_get, allowed_hosts: [...]}, {mcp: server, tools: [...], prefix: ...}).",
)


class MCPServerOptions(_Spec):
    optional: bool = Field(
        False,
        description="Start without this server when it cannot be reached (its tools are absent "
        "and /readyz says so); it is retried in the background.",
    )
    connect_timeout: float = Field(30.0, gt=0, description="Seconds to connect and list tools.")


class StdioServerSpec(MCPServerOptions):
    """An MCP server started as a subprocess (stdio transport)."""

    command: str = Field(min_length=1, examples=["npx", "uvx", "python"])
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(
        default_factory=dict, description="Extra environment variables; ${VAR} allowed."
    )
    cwd: str | None = Field(None, description="Working directory, relative to the config file.")


class HTTPServerSpec(MCPServerOptions):
    """An MCP server at a streamable-HTTP URL."""

    url: str = Field(pattern=r"^https?://", examples=["https://mcp.example.com/mcp"])
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Sent with every request; ${VAR} allowed."
    )


SERVER_TAGS = ("stdio", "http")
CACHE_TAGS = ("switch", "settings")


def _server_kind(value: Any) -> str:
    has_url = "url" in value if isinstance(value, dict) else hasattr(value, "url")
    return "http" if has_url else "stdio"


MCPServerSpec = Annotated[
    Annotated[StdioServerSpec, Tag("stdio")] | Annotated[HTTPServerSpec, Tag("http")],
    Discriminator(_server_kind),
]

MCPServersField: Any = Field(
    default_factory=dict,
    description="External MCP servers whose tools agents use ({mcp: name} in tools), by name.",
)

MCPServerName = Annotated[str, StringConstraints(pattern=SERVER_NAME)]


def drop_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A validation error's location without the union tags of tools and servers."""
    return tuple(
        part
        for i, part in enumerate(loc)
        if not (
            (part in TOOL_TAGS and i >= 2 and loc[i - 2] == "tools" and isinstance(loc[i - 1], int))
            or (part in SERVER_TAGS and i == 2 and loc[0] == "mcp_servers")
            or (part in CACHE_TAGS and i >= 1 and loc[i - 1] == "cache")
        )
    )
